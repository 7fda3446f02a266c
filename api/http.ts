import type { Context } from 'koa';
import { Readable } from 'node:stream';
import { UnsupportedRequestedContentType } from '../domain/shared/errors.ts';
import type { AppContext } from './services.ts';

export const JSON_TYPE = 'application/json';
export const NDJSON_TYPE = 'application/x-json-stream';

/** The `accept` of routes that answer only JSON, or only an NDJSON stream. */
export const JSON_ONLY: readonly string[] = [JSON_TYPE];
export const STREAM_ONLY: readonly string[] = [NDJSON_TYPE];

/**
 * Content types are set as exact header values: the Python client compares them literally, and
 * Koa's `ctx.type` would append `; charset=utf-8`.
 */
export const sendJson = (ctx: Context, value: unknown, status = 200): void => {
  ctx.status = status;
  // Node's own call: Koa's ctx.set allocates arrays for every header (most answers are JSON).
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.body = JSON.stringify(value);
};

/** The answer of Rucio's creation routes: status 201 and the JSON string "Created". */
export const sendCreated = (ctx: Context): void => sendJson(ctx, 'Created', 201);

/** An empty 200 answer, as Rucio's updates and deletions give. */
export const sendOk = (ctx: Context, status = 200): void => {
  ctx.status = status;
  ctx.set('Content-Type', 'text/html; charset=utf-8');
  ctx.body = '';
};

export const sendText = (ctx: Context, text: string, status = 200, contentType = 'text/html; charset=utf-8'): void => {
  ctx.status = status;
  ctx.set('Content-Type', contentType);
  ctx.body = text;
};

/** Lines are grouped into chunks of about this many bytes before they are written. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Streams one JSON document per line straight from an async source (a read-store cursor), so
 * memory stays flat however many rows match. The first item is read before the status is sent,
 * so a failure at the start still becomes a proper error answer. Zero items: 200, empty body.
 */
export const sendStream = (
  ctx: Context,
  source: AsyncIterable<unknown>,
  contentType: string = NDJSON_TYPE,
  /** Writes one item as one line of JSON; default JSON.stringify. */
  serialize: (item: unknown) => string = JSON.stringify,
): Promise<void> =>
  sendChunks(
    ctx,
    mapStream(source, (item) => `${serialize(item)}\n`),
    contentType,
  );

/**
 * Streams text chunks as they come (NDJSON lines, a metalink document), grouped into writes of
 * about CHUNK_BYTES. Like `sendStream`, the first chunk is read before the status is sent; it is
 * written at once with the headers, so the client has its first line without waiting for more.
 */
export const sendChunks = async (ctx: Context, source: AsyncIterable<string>, contentType: string): Promise<void> => {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  ctx.status = 200;
  ctx.set('Content-Type', contentType);
  if (first.done) {
    ctx.body = '';
    return;
  }
  async function* grouped(): AsyncGenerator<string> {
    yield first.value;
    let chunk = '';
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        chunk += next.value;
        if (chunk.length >= CHUNK_BYTES) {
          yield chunk;
          chunk = '';
        }
      }
      if (chunk.length > 0) yield chunk;
    } finally {
      await iterator.return?.();
    }
  }
  ctx.body = Readable.from(grouped(), { objectMode: false });
};

/** Maps an async source item by item, keeping it lazy. */
export async function* mapStream<T, R>(source: AsyncIterable<T>, map: (item: T) => R | undefined): AsyncGenerator<R> {
  for await (const item of source) {
    const mapped = map(item);
    if (mapped !== undefined) yield mapped;
  }
}

/**
 * Rucio's Accept check: with an Accept header that allows none of `types` (wildcards count) the
 * answer is 406 UnsupportedRequestedContentType. No Accept header is fine.
 */
export const requireAccept = (ctx: AppContext, types: readonly string[]): void => {
  const accept = ctx.get('Accept');
  if (!accept) return;
  if (ctx.accepts(...types)) return;
  throw new UnsupportedRequestedContentType(
    `The requested content type ${accept} is not supported. Use ${JSON.stringify(types)}.`,
  );
};
