import { rseSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { DARK_REAPER_SETTINGS } from './darkReaperSettings.ts';
import { QUARANTINE_EVENT_TYPES } from './quarantine.ts';

/** Dark files quarantined on an RSE, and the dark reaper: each event concerns its RSE. */
export const quarantineArea = domainArea({
  name: 'quarantine',
  events: QUARANTINE_EVENT_TYPES,
  upcasters: [],
  settings: DARK_REAPER_SETTINGS,
  audit: { subjectsOf: (event) => [rseSubject(event.data.rse)] },
});
