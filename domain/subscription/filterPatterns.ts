import { InvalidObject } from '../shared/errors.ts';
import { compilePythonPattern, UnsupportedPattern, type StartMatcher } from '../shared/pythonRegex.ts';

/**
 * Subscription filters are Python regular expressions applied with `re.match` (anchored at the
 * start of the text, not at its end: `mc16` matches the scope `mc16_13TeV`), run on RE2
 * (domain/shared/pythonRegex.ts). One RE2 cannot run is refused with InvalidObject when the
 * subscription is added or updated.
 */

export type { StartMatcher } from '../shared/pythonRegex.ts';

/** Compiles a Python expression, or throws InvalidObject naming `what` and why. */
export const compilePythonRegex = (pattern: string, what: string): StartMatcher => {
  try {
    return compilePythonPattern(pattern);
  } catch (error) {
    if (!(error instanceof UnsupportedPattern)) throw error;
    throw new InvalidObject(
      `Problem validating subscription filter: ${what} ${JSON.stringify(pattern.slice(0, 200))} is not a valid regular expression here (${error.reason})`,
    );
  }
};

const META = new Set(['.', '^', '$', '*', '+', '?', '{', '}', '[', ']', '\\', '|', '(', ')']);
/** Quantifiers that may repeat the character before them zero times. */
const OPTIONAL_QUANTIFIERS = new Set(['*', '?', '{']);
/** Escapes that stand for one literal character. */
const LITERAL_ESCAPES = /[.^$*+?{}[\]\\|()\-/]/;

/**
 * The text every string an expression matches (with `re.match`) starts with: its leading literal
 * characters, without the last one when a quantifier may drop it (`mc16_*` → `mc16`). An
 * expression with an alternation anywhere has none (''). What indexes subscriptions by scope.
 */
export const literalPrefix = (pattern: string): string => {
  if (pattern.includes('|') || /^\(\?/.test(pattern)) return '';
  let prefix = '';
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index]!;
    // A leading `^` changes nothing for re.match.
    if (index === 0 && char === '^') continue;
    if (char === '\\') {
      const next = pattern[index + 1];
      if (next === undefined || !LITERAL_ESCAPES.test(next)) return prefix;
      const after = pattern[index + 2];
      if (after !== undefined && OPTIONAL_QUANTIFIERS.has(after)) return prefix;
      prefix += next;
      index += 1;
      continue;
    }
    if (META.has(char)) return OPTIONAL_QUANTIFIERS.has(char) ? prefix.slice(0, -1) : prefix;
    prefix += char;
  }
  return prefix;
};
