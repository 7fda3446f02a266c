import { didSubject, rseSubject, ruleSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { eventTypes } from '../shared/event.ts';
import { CONVEYOR_SETTINGS } from './conveyorSettings.ts';
import { REQUEST_EVENT_TYPES, type RequestEvent } from './request.ts';
import { requestUpcasters } from './requestUpcasters.ts';
import { TRANSFER_LIMIT_EVENT_TYPES, type TransferLimitEvent } from './transferLimit.ts';

/**
 * What a batch of transfer requests concerns: each request's file, and for a queued one also its
 * rule and RSE; the intermediate hops of a multihop path their file and every RSE of the path. Transfer limits concern no subject (the feed finds them).
 */
const requestEventSubjects = (event: RequestEvent | TransferLimitEvent): string[] => {
  switch (event.type) {
    case 'RequestQueued':
      return event.data.requests.flatMap(({ request }) => [
        didSubject(request.scope, request.name),
        ruleSubject(request.ruleId),
        rseSubject(request.destRse),
      ]);
    case 'RequestCancelled':
      return event.data.requests.map((request) => didSubject(request.scope, request.name));
    // A multihop path concerns its file and every RSE it passes through.
    case 'RequestHopsQueued':
      return event.data.paths.flatMap(({ hops, path }) => [
        ...hops.map((hop) => didSubject(hop.scope, hop.name)),
        ...path.map((rse) => rseSubject(rse)),
      ]);
    default:
      return [];
  }
};

/** Transfer requests, the conveyor and transfer limits. */
export const requestArea = domainArea({
  name: 'request',
  events: eventTypes<RequestEvent | TransferLimitEvent>({ ...REQUEST_EVENT_TYPES, ...TRANSFER_LIMIT_EVENT_TYPES }),
  upcasters: requestUpcasters,
  settings: CONVEYOR_SETTINGS,
  audit: { subjectsOf: requestEventSubjects },
});
