import { domainArea } from '../shared/domainArea.ts';
import { AUTH_SETTINGS } from './authSettings.ts';
import { IDENTITY_EVENT_TYPES } from './identity.ts';

/** Identities and how they log in; their events concern no subject. */
export const identityArea = domainArea({
  name: 'identity',
  events: IDENTITY_EVENT_TYPES,
  upcasters: [],
  settings: AUTH_SETTINGS,
  audit: {},
});
