import { rseSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { ACCOUNT_LIMIT_EVENT_TYPES } from './accountLimit.ts';

/** Account limits: a local limit concerns its RSE. */
export const accountLimitArea = domainArea({
  name: 'accountLimit',
  events: ACCOUNT_LIMIT_EVENT_TYPES,
  upcasters: [],
  settings: {},
  audit: {
    subjectsOf: (event) => {
      switch (event.type) {
        case 'LocalAccountLimitSet':
        case 'LocalAccountLimitRemoved':
          return [rseSubject(event.data.rse)];
        default:
          return [];
      }
    },
  },
});
