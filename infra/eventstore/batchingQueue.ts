/**
 * Turns a push source (one event at a time) into batches for a pull consumer: the consumer gets
 * whatever has arrived, up to `maxBatch`, and waits only when nothing has. The producer waits
 * while a full batch is unread, so memory stays bounded when the consumer is slow.
 */
export class BatchingQueue<T> {
  private items: T[] = [];
  private ended = false;
  private failure: unknown;
  private consumerWaiting: (() => void) | undefined;
  private producerWaiting: (() => void) | undefined;

  constructor(private readonly maxBatch: number) {}

  async push(item: T): Promise<void> {
    while (this.items.length >= this.maxBatch && !this.ended) {
      await new Promise<void>((resolve) => (this.producerWaiting = resolve));
    }
    if (this.ended) return;
    this.items.push(item);
    this.wakeConsumer();
  }

  end(): void {
    this.ended = true;
    this.wakeConsumer();
    this.wakeProducer();
  }

  fail(error: unknown): void {
    this.failure = error;
    this.end();
  }

  async *batches(): AsyncGenerator<T[]> {
    for (;;) {
      if (this.items.length > 0) {
        const batch = this.items.splice(0, this.maxBatch);
        this.wakeProducer();
        yield batch;
        continue;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.consumerWaiting = resolve));
    }
  }

  private wakeConsumer(): void {
    const wake = this.consumerWaiting;
    this.consumerWaiting = undefined;
    wake?.();
  }

  private wakeProducer(): void {
    const wake = this.producerWaiting;
    this.producerWaiting = undefined;
    wake?.();
  }
}
