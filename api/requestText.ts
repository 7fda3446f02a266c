import { ValueError } from '../domain/shared/errors.ts';
import { CONTROL_CHARACTERS, PROTOTYPE_KEYS } from '../domain/shared/names.ts';

/**
 * A query string whose parts are not valid percent-encoded UTF-8, decode to control characters,
 * or whose key is a prototype key (`constructor`: query keys are filters), is refused before any
 * route reads it. Koa's parser would keep such bytes as
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
    if (CONTROL_CHARACTERS.test(decoded))
      throw new ValueError(`The query string part '${part.slice(0, 100)}' holds control characters.`);
    const key = decoded.split('=', 1)[0]!;
    if (PROTOTYPE_KEYS.has(key)) throw new ValueError(`'${key}' is not allowed as a query parameter.`);
  }
};
