import { eventTypes } from '../shared/event.ts';
import { domainArea } from '../shared/domainArea.ts';
import { DIRAC_SETTINGS } from './diracSettings.ts';

/** DIRAC's catalogue calls compose the DID, replica and rule areas: no events of their own, only options. */
export const diracArea = domainArea({
  name: 'dirac',
  events: eventTypes<never>({}),
  upcasters: [],
  settings: DIRAC_SETTINGS,
  audit: {},
});
