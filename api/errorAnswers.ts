import type { Context, Middleware } from 'koa';
import { RucioError } from '../domain/shared/errors.ts';
import { ReadStoreBusyError } from '../infra/readstore/readStore.ts';
import { errorCode } from '../infra/typeGuards.ts';
import { pythonJson } from './pythonJson.ts';
import type { AppState } from './services.ts';

/** Unread request bodies up to this size are drained after an error answer, keeping the connection. */
const DRAIN_LIMIT_BYTES = 1024 * 1024;

/** Rucio cuts the header copy of the message at 125 characters and appends `...`. */
const HEADER_MESSAGE_LIMIT = 125;

const headerSafe = (text: string): string =>
  // Header values may not hold line breaks, and Node refuses characters outside Latin-1.
  text.replace(/[\r\n]/g, ' ').replace(/[^\t\x20-\x7e\xa0-\xff]/g, '?');

/** A class or message as Rucio puts it in a header: one line, cut at 125 characters with `...`. */
export const errorHeaderValue = (text: string): string => {
  const flat = text.replace(/[\r\n]/g, ' ');
  return headerSafe(flat.length > HEADER_MESSAGE_LIMIT ? `${flat.slice(0, HEADER_MESSAGE_LIMIT)}...` : flat);
};

/**
 * Writes an error the way Rucio does: the status, `ExceptionClass` and `ExceptionMessage`
 * headers, and the same two fields as a JSON body typed application/octet-stream.
 */
export const writeError = (ctx: Context, status: number, exceptionClass: string, message: string): void => {
  ctx.status = status;
  ctx.set('ExceptionClass', errorHeaderValue(exceptionClass));
  ctx.set('ExceptionMessage', errorHeaderValue(message));
  ctx.set('Content-Type', 'application/octet-stream');
  ctx.body = pythonJson({ ExceptionClass: exceptionClass, ExceptionMessage: message });
};

/**
 * The one place errors become responses. Domain errors carry their Rucio class and its usual
 * status; the route may override that status (ctx.state.errorStatus). Body-parser failures keep their status.
 * A store that another writer kept locked past the wait is a moment's congestion, not a bug:
 * 503 with Retry-After, which Rucio's clients retry. Anything else is a bug: logged with the
 * request id, answered 500 without internals.
 */
export const errorMiddleware = (): Middleware<AppState> => async (ctx, next) => {
  try {
    await next();
  } catch (error) {
    answerError(ctx, error);
    // A body left unread (refused for its size, its encoding) is read to its end and dropped by
    // Node to keep the connection, when it is small; a large or endless one is not worth it: the
    // answer closes the connection instead.
    const declared = Number(ctx.get('Content-Length') || Number.NaN);
    // A body that stopped arriving (408) will not drain either.
    if (!ctx.req.complete && (!(declared <= DRAIN_LIMIT_BYTES) || ctx.status === 408)) ctx.set('Connection', 'close');
  }
};

const isClientError = (error: unknown): error is Error & { status: number } =>
  error instanceof Error &&
  'status' in error &&
  typeof error.status === 'number' &&
  error.status >= 400 &&
  error.status < 500 &&
  'expose' in error &&
  error.expose === true;

/** Seconds a client is asked to wait before retrying a write a busy store refused. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/** The read store's refusal, or SQLite's own busy answer from any store (the event log's too). */
const isStoreBusy = (error: unknown): boolean =>
  error instanceof ReadStoreBusyError || (errorCode(error)?.startsWith('SQLITE_BUSY') ?? false);

const answerError = (ctx: Context, error: unknown): void => {
  if (error instanceof RucioError) {
    writeError(
      ctx,
      ctx.state.errorStatus?.[error.exceptionClass] ?? error.httpStatus,
      error.exceptionClass,
      error.message,
    );
    return;
  }
  // Koa's own client errors (http-errors): their status, and a message meant to be shown.
  if (isClientError(error)) {
    writeError(ctx, error.status, 'ValueError', error.message);
    return;
  }
  if (isStoreBusy(error)) {
    ctx.state.logger?.warn({ err: error }, 'a store stayed locked by another writer; answered 503');
    writeError(ctx, 503, 'ResourceTemporaryUnavailable', 'The service is busy writing; try again in a moment.');
    ctx.set('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    return;
  }
  ctx.state.logger?.error({ err: error }, 'unexpected error');
  writeError(ctx, 500, 'RucioException', `An unexpected error occurred (request ${ctx.state.requestId ?? 'unknown'}).`);
};
