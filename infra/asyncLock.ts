/** Runs async critical sections one at a time, in the order they asked. */
export class AsyncLock {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(work, work);
    // Keep the chain alive whatever `work` does; the caller sees its own outcome through `result`.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
