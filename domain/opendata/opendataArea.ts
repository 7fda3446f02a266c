import { didSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { eventTypes } from '../shared/event.ts';
import { OPENDATA_EVENT_TYPES, type OpenDataEvent } from './opendata.ts';
import { OPENDATA_IDENTIFIER_EVENT_TYPES, type OpenDataIdentifierEvent } from './opendataIdentifiers.ts';
import { OPENDATA_SETTINGS } from './opendataSettings.ts';

/** The open data catalogue: an entry's events, and those of the DOI and record id it holds, concern its DID. */
export const opendataArea = domainArea({
  name: 'opendata',
  events: eventTypes<OpenDataEvent | OpenDataIdentifierEvent>({
    ...OPENDATA_EVENT_TYPES,
    ...OPENDATA_IDENTIFIER_EVENT_TYPES,
  }),
  upcasters: [],
  settings: OPENDATA_SETTINGS,
  audit: { subjectsOf: (event) => [didSubject(event.data.scope, event.data.name)] },
});
