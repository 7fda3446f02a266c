import { ValueError } from '../domain/shared/errors.ts';
import { CONTROL_CHARACTERS } from '../domain/shared/names.ts';

/**
 * Bounds every JSON body is held to before a route reads it, where Rucio's schemas set none (the
 * body's size is bounded apart, DMS_MAX_BODY_BYTES). Deeper documents would overflow the stack of
 * whatever walks them later (serialising the event), and no request of this API nests past a
 * dozen levels.
 */
export const JSON_LIMITS = {
  /** Arrays and objects inside each other. */
  maxDepth: 64,
  /** Characters of one string, key or value (Rucio's longest text columns hold 4000). */
  maxStringLength: 65_536,
} as const;

/**
 * Checks a parsed document without recursion: its depth, every string's length and form (no lone
 * UTF-16 surrogates, which no store keeps as given), every key (no control characters, never
 * `__proto__`, which copying the object would turn into its prototype), every number finite
 * (`1e400` parses to Infinity). A violation is 400 ValueError.
 */
export const checkJsonBounds = (document: unknown): void => {
  const pending: { value: unknown; depth: number }[] = [{ value: document, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next;
    if (typeof value === 'string') checkString(value, 'A string');
    else if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new ValueError('A number in the body is too large.');
    } else if (value !== null && typeof value === 'object') {
      if (depth >= JSON_LIMITS.maxDepth)
        throw new ValueError(`The body nests deeper than ${JSON_LIMITS.maxDepth} levels.`);
      if (Array.isArray(value)) {
        for (const item of value) pending.push({ value: item, depth: depth + 1 });
      } else {
        for (const [key, item] of Object.entries(value)) {
          checkString(key, 'A key');
          if (key === '__proto__') throw new ValueError("'__proto__' is not allowed as a key.");
          if (CONTROL_CHARACTERS.test(key))
            throw new ValueError(`The key ${JSON.stringify(key)} holds control characters.`);
          pending.push({ value: item, depth: depth + 1 });
        }
      }
    }
  }
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const checkString = (text: string, what: string): void => {
  if (text.length > JSON_LIMITS.maxStringLength) {
    throw new ValueError(`${what} in the body is longer than ${JSON_LIMITS.maxStringLength} characters.`);
  }
  if (LONE_SURROGATE.test(text))
    throw new ValueError(`${what} in the body holds an unpaired surrogate (\\ud800-\\udfff).`);
};
