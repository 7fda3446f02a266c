import { isRecord } from '../typeGuards.ts';

/**
 * Which way a multi-stream decision is written to an EventStoreDB / KurrentDB server:
 *
 * - `atomic`: KurrentDB 25.1 and later append to several streams in one transaction
 *   (`multiStreamAppend` of `@kurrent/kurrentdb-client`, the gRPC method
 *   `kurrentdb.protocol.v2.streams.StreamsService/AppendSession`), each stream at its expected
 *   revision, all or nothing, checked and committed by the server. No leases, no intent.
 * - `stepped`: older servers (EventStoreDB 20.x to 24.x, KurrentDB 25.0) append one stream per
 *   call, so SteppedEventStore makes the decision whole with leases in Redis and an intent in
 *   `step-<id>` (steppedEventStore.ts).
 *
 * The server says what it offers: every server since EventStoreDB 21.10 answers
 * `ServerFeatures.GetSupportedMethods` with its version and the gRPC methods it serves, and the
 * client asks it once per connection (the answer the client keeps, `ServerFeatures`, is what
 * `featureAnswerOf` reads). Older servers do not know the call: their version is "unknown" and
 * they offer nothing, so they get the stepped path.
 */

/** The method the client calls for `multiStreamAppend`, as the server lists it (paths compare without case). */
export const APPEND_SESSION_METHOD = '/kurrentdb.protocol.v2.streams.StreamsService/AppendSession';

/** What the server answered about itself. */
export type FeatureAnswer = Readonly<{
  /** `25.1.0`, or `unknown` for a server that predates the features call (EventStoreDB before 21.10). */
  serverVersion: string;
  /** Whether the server serves the gRPC method at this path. */
  offers: (methodPath: string) => boolean;
}>;

/** `auto`: atomic where the server offers it; `stepped`: the lease protocol whatever the server. */
export type AppendsOption = 'auto' | 'stepped';

export type AppendPath = Readonly<{ kind: 'atomic' | 'stepped'; reason: string }>;

export const chooseAppendPath = (answer: FeatureAnswer | undefined, option: AppendsOption): AppendPath => {
  if (option === 'stepped') return { kind: 'stepped', reason: 'the stepped protocol was asked for' };
  if (!answer)
    return {
      kind: 'stepped',
      reason: "the client's answer about the server's features could not be read (the client changed?)",
    };
  const server =
    answer.serverVersion === 'unknown'
      ? 'a server without the features call (before 21.10)'
      : `server ${answer.serverVersion}`;
  return answer.offers(APPEND_SESSION_METHOD)
    ? { kind: 'atomic', reason: `${server} offers atomic multi-stream appends` }
    : { kind: 'stepped', reason: `${server} does not offer atomic multi-stream appends (KurrentDB 25.1 does)` };
};

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
