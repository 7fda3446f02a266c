import type { Services } from '../api/services.ts';
import type { Reaction } from './reactor.ts';
import type { Processor } from './workerHost.ts';

/**
 * The daemon roles this service runs: which events the reactor turns into jobs, and which
 * processors drain those queues. Each role (judge-injector, judge-evaluator, conveyor, ...) adds
 * its reaction and processor here when its area of the API is built; they change state only by
 * issuing commands through `services.commands`.
 */
export const reactions: readonly Reaction[] = [];

export const processors = (_services: Services): readonly Processor[] => [];
