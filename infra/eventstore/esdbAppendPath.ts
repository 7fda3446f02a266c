import { EnvironmentError } from '../environmentError.ts';
import { isRecord } from '../typeGuards.ts';

/**
 * Whether an EventStoreDB / KurrentDB server can take the service's writes. Every decision of
 * the service is one atomic append, whatever the number of streams it writes: KurrentDB 25.1
 * and later append to several streams in one transaction (`multiStreamAppend` of
 * `@kurrent/kurrentdb-client`, the gRPC method
 * `kurrentdb.protocol.v2.streams.StreamsService/AppendSession`), each stream at its expected
 * revision, all or nothing, checked and committed by the server. Older servers append one stream
 * per call and are refused at start, with the version they run and the one needed.
 *
 * The server says what it offers: every server since EventStoreDB 21.10 answers
 * `ServerFeatures.GetSupportedMethods` with its version and the gRPC methods it serves, and the
 * client asks it once per connection (the answer the client keeps, `ServerFeatures`, is what
 * `featureAnswerOf` reads). Older servers do not know the call: their version is "unknown" and
 * they offer nothing.
 */

/** The method the client calls for `multiStreamAppend`, as the server lists it (paths compare without case). */
export const APPEND_SESSION_METHOD = '/kurrentdb.protocol.v2.streams.StreamsService/AppendSession';

/** The first server release that appends to several streams atomically. */
export const ATOMIC_APPENDS_SINCE = 'KurrentDB 25.1';

/** What the server answered about itself. */
export type FeatureAnswer = Readonly<{
  /** `25.1.0`, or `unknown` for a server that predates the features call (EventStoreDB before 21.10). */
  serverVersion: string;
  /** Whether the server serves the gRPC method at this path. */
  offers: (methodPath: string) => boolean;
}>;

/** The server takes atomic multi-stream appends, or why not. */
export type AtomicAppendCheck = Readonly<{ atomic: boolean; reason: string }>;

export const checkAtomicAppends = (answer: FeatureAnswer | undefined): AtomicAppendCheck => {
  if (!answer)
    return {
      atomic: false,
      reason: "the client's answer about the server's features could not be read (the client changed?)",
    };
  const server =
    answer.serverVersion === 'unknown'
      ? 'a server without the features call (before EventStoreDB 21.10)'
      : `server ${answer.serverVersion}`;
  return answer.offers(APPEND_SESSION_METHOD)
    ? { atomic: true, reason: `${server} offers atomic multi-stream appends` }
    : { atomic: false, reason: `${server} does not offer atomic multi-stream appends` };
};

/** The server cannot write a multi-stream decision whole: the service does not start on it. */
export class AtomicAppendsUnavailableError extends EnvironmentError {
  constructor(readonly check: AtomicAppendCheck) {
    super(
      `The event store cannot be used: ${check.reason}. dms writes every decision in one atomic append, ` +
        `which needs ${ATOMIC_APPENDS_SINCE} or later (EventStoreDB 20.x to 24.x and KurrentDB 25.0 append one ` +
        'stream per call): upgrade the server (docs/operations.md, "Scaling out")',
    );
    this.name = 'AtomicAppendsUnavailableError';
  }
}

/**
 * The client's `ServerFeatures` (what its `capabilities` resolves to) as a FeatureAnswer, or
 * undefined when it no longer has that shape. `supports` takes a gRPC method definition and reads
 * only its `path`.
 */
export const featureAnswerOf = (features: unknown): FeatureAnswer | undefined => {
  if (!isClientFeatures(features)) return undefined;
  return {
    serverVersion: features.serverVersion,
    offers: (methodPath) => features.supports({ path: methodPath }) === true,
  };
};

type ClientFeatures = Readonly<{
  serverVersion: string;
  supports: (method: Readonly<{ path: string }>) => unknown;
}>;

const isClientFeatures = (value: unknown): value is ClientFeatures =>
  isRecord(value) && typeof value.serverVersion === 'string' && typeof value.supports === 'function';
