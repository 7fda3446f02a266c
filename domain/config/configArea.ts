import { domainArea } from '../shared/domainArea.ts';
import { CONFIG_EVENT_TYPES } from './config.ts';
import { SERVICE_SETTINGS } from './serviceSettings.ts';

/** The configuration (`/config`) and the options of the service as a whole; its events concern no subject. */
export const configArea = domainArea({
  name: 'config',
  events: CONFIG_EVENT_TYPES,
  upcasters: [],
  settings: SERVICE_SETTINGS,
  audit: {},
});
