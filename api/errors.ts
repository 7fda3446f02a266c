import type { Context, Middleware } from 'koa';
import { RucioError } from '../domain/shared/errors.ts';
import { pythonJson } from './pythonJson.ts';
import type { AppState } from './services.ts';

/** Rucio cuts the header copy of the message at 125 characters and appends `...`. */
const HEADER_MESSAGE_LIMIT = 125;

const headerSafe = (text: string): string =>
  // Header values may not hold line breaks, and Node refuses characters outside Latin-1.
  text.replace(/[\r\n]/g, ' ').replace(/[^\t\x20-\x7e\xa0-\xff]/g, '?');

/**
 * Writes an error the way Rucio does: the status, `ExceptionClass` and `ExceptionMessage`
 * headers, and the same two fields as a JSON body typed application/octet-stream.
 */
export const writeError = (ctx: Context, status: number, exceptionClass: string, message: string): void => {
  const flat = message.replace(/[\r\n]/g, ' ');
  const headerMessage = flat.length > HEADER_MESSAGE_LIMIT ? `${flat.slice(0, HEADER_MESSAGE_LIMIT)}...` : flat;
  ctx.status = status;
  ctx.set('ExceptionClass', headerSafe(exceptionClass));
  ctx.set('ExceptionMessage', headerSafe(headerMessage));
  ctx.set('Content-Type', 'application/octet-stream');
  ctx.body = pythonJson({ ExceptionClass: exceptionClass, ExceptionMessage: message });
};

/**
 * The one place errors become responses. Domain errors carry their Rucio class and its usual
 * status; the route may override that status (ctx.state.errorStatus). Body-parser failures keep their status.
 * Anything else is a bug: logged with the request id, answered 500 without internals.
 */
export const errorMiddleware = (): Middleware<AppState> => async (ctx, next) => {
  try {
    await next();
  } catch (error) {
    if (error instanceof RucioError) {
      writeError(ctx, ctx.state.errorStatus?.[error.exceptionClass] ?? error.httpStatus, error.exceptionClass, error.message);
      return;
    }
    const status = (error as { status?: number; expose?: boolean }).status;
    if (status === 413) {
      writeError(ctx, 413, 'RequestEntityTooLarge', 'The request body is larger than the server accepts.');
      return;
    }
    if (status && status >= 400 && status < 500 && (error as { expose?: boolean }).expose) {
      writeError(ctx, status, 'ValueError', (error as Error).message);
      return;
    }
    ctx.state.logger?.error({ err: error }, 'unexpected error');
    writeError(ctx, 500, 'RucioException', `An unexpected error occurred (request ${ctx.state.requestId ?? 'unknown'}).`);
  }
};
