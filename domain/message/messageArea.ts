import { eventTypes } from '../shared/event.ts';
import { domainArea } from '../shared/domainArea.ts';
import { HERMES_SETTINGS } from './hermesSettings.ts';

/** Messages are derived from the events of other areas (message.ts): no events of their own, hermes's options. */
export const messageArea = domainArea({
  name: 'message',
  events: eventTypes<never>({}),
  upcasters: [],
  settings: HERMES_SETTINGS,
  audit: {},
});
