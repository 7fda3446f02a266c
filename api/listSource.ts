/** An already computed, short list as the async source `sendStream` takes. */
export async function* fromList<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}
