import { rseSubject } from '../shared/auditSubjects.ts';
import { domainArea } from '../shared/domainArea.ts';
import { RSE_EVENT_TYPES, type RseEvent } from './rse.ts';
import { RSE_SETTINGS } from './rseSettings.ts';

/** What an RSE's event concerns: the RSE, and a distance both its ends. */
const rseEventSubjects = (event: RseEvent): string[] =>
  event.type === 'RseDistanceSet' || event.type === 'RseDistanceRemoved'
    ? [rseSubject(event.data.rse), rseSubject(event.data.destRse)]
    : [rseSubject(event.data.rse)];

/** Storage elements; an RSE's own stream (`rse-<name>`) is its history. */
export const rseArea = domainArea({
  name: 'rse',
  events: RSE_EVENT_TYPES,
  upcasters: [],
  settings: RSE_SETTINGS,
  audit: { subjectStreams: 'rse', subjectsOf: rseEventSubjects },
});
