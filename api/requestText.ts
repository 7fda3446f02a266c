import { ValueError } from '../domain/shared/errors.ts';
import { CONTROL_CHARACTERS } from '../domain/shared/names.ts';

/**
 * A query string whose parts are not valid percent-encoded UTF-8, or decode to control
 * characters, is refused before any route reads it. Koa's parser would keep such bytes as
 * replacement characters, and a name or key read from it would not be the one the client sent.
 */
export const refuseUnsafeQuery = (querystring: string): void => {
  if (querystring === '') return;
  for (const part of querystring.split('&')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(part.replaceAll('+', ' '));
    } catch {
      throw new ValueError(`The query string part '${part.slice(0, 100)}' is not percent-encoded UTF-8.`);
    }
    if (CONTROL_CHARACTERS.test(decoded)) throw new ValueError(`The query string part '${part.slice(0, 100)}' holds control characters.`);
  }
};
