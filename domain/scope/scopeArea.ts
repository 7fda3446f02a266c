import { domainArea } from '../shared/domainArea.ts';
import { SCOPE_EVENT_TYPES } from './scope.ts';

/** Scopes; their events concern no subject. */
export const scopeArea = domainArea({
  name: 'scope',
  events: SCOPE_EVENT_TYPES,
  upcasters: [],
  settings: {},
  audit: {},
});
