import { didSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { LIFETIME_EXCEPTION_EVENT_TYPES } from './lifetimeException.ts';
import { LIFETIME_EXCEPTION_SETTINGS } from './lifetimeExceptionSettings.ts';

/**
 * Lifetime exceptions and atropos: a request concerns each of its DIDs; its approval and rejection
 * are found through its stream.
 */
export const lifetimeExceptionArea = domainArea({
  name: 'lifetimeException',
  events: LIFETIME_EXCEPTION_EVENT_TYPES,
  upcasters: [],
  settings: LIFETIME_EXCEPTION_SETTINGS,
  audit: {
    subjectsOf: (event) =>
      event.type === 'ExceptionRequested'
        ? event.data.exception.dids.map((did) => didSubject(did.scope, did.name))
        : [],
  },
});
