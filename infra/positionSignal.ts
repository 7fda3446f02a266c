/**
 * "Up to this position" told between the processes of a deployment: an API process announces
 * that events were appended up to a position, a projector that it has applied them up to one.
 * A signal only wakes a waiter sooner: it can be lost (a Redis restart, a dropped connection), so
 * whoever waits on one still looks at the stores themselves, less often, and a message never
 * stands in for what the stores say except where the publisher has stored it first.
 */
export interface PositionSignal {
  /**
   * Tells every process listening (this one included) that the publisher has reached `position`.
   * Returns at once; when called several times in one turn of the event loop only the highest
   * position is sent, and one that cannot be sent is dropped.
   */
  publish(position: bigint): void;
  /** Calls `listener` with every position received; returns what stops it. */
  subscribe(listener: (position: bigint) => void): () => void;
  /** Whether positions are being received now (connected and subscribed); false: poll the stores. */
  isListening(): boolean;
}
