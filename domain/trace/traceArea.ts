import { eventTypes } from '../shared/event.ts';
import { domainArea } from '../shared/domainArea.ts';
import { TRACE_SETTINGS } from './traceSettings.ts';

/** Traces are recorded by kronos as replica and DID accesses: no events of their own, only options. */
export const traceArea = domainArea({
  name: 'trace',
  events: eventTypes<never>({}),
  upcasters: [],
  settings: TRACE_SETTINGS,
  audit: {},
});
