import { domainArea } from '../shared/domainArea.ts';
import { ACCOUNT_EVENT_TYPES } from './account.ts';

/** Accounts: their events concern no subject of the audit, which finds them by the account and type (the feed). */
export const accountArea = domainArea({
  name: 'account',
  events: ACCOUNT_EVENT_TYPES,
  upcasters: [],
  settings: {},
  audit: {},
});
