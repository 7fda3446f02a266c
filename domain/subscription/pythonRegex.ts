import { InvalidObject } from '../shared/errors.ts';
import { errorMessage } from '../shared/narrowing.ts';

/**
 * Subscription filters are Python regular expressions applied with `re.match` (anchored at the
 * start of the text, not at its end: `mc16` matches the scope `mc16_13TeV`). They are turned into
 * JavaScript expressions once, when a subscription is read: the few Python-only spellings are
 * rewritten, anything JavaScript cannot compile is refused with InvalidObject when the
 * subscription is added or updated.
 */

/** Longest expression accepted (the whole filter is bounded by Rucio's 4000-character column too). */
export const MAX_PATTERN_LENGTH = 1000;

/** Python spellings with a JavaScript twin: named groups, their back-references, `\A` and `\Z`. */
const toJavaScript = (source: string): { source: string; flags: string } => {
  let flags = '';
  let rewritten = source;
  // A leading inline flag group: `(?i)`, `(?s)`, `(?is)`, ...
  const inline = /^\(\?([aiLmsux]+)\)/.exec(rewritten);
  if (inline) {
    for (const flag of inline[1]!) {
      if (flag === 'i' || flag === 'm' || flag === 's') flags += flag;
    }
    rewritten = rewritten.slice(inline[0].length);
  }
  rewritten = rewritten
    .replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>')
    .replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, '\\k<$1>')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$');
  return { source: rewritten, flags };
};

/** A matcher with `re.match` semantics: does the expression match at the start of the text? */
export type StartMatcher = (text: string) => boolean;

/** Compiles a Python expression, or throws InvalidObject naming `what` and why. */
export const compilePythonRegex = (pattern: string, what: string): StartMatcher => {
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new InvalidObject(
      `Problem validating subscription filter: ${what} is longer than ${MAX_PATTERN_LENGTH} characters`,
    );
  const { source, flags } = toJavaScript(pattern);
  let expression: RegExp;
  try {
    // Sticky: the match must start at index 0, as Python's re.match.
    expression = new RegExp(source, `${flags}y`);
  } catch (error) {
    throw new InvalidObject(
      `Problem validating subscription filter: ${what} ${JSON.stringify(pattern)} is not a valid regular expression (${errorMessage(error)})`,
    );
  }
  return (text) => {
    expression.lastIndex = 0;
    return expression.test(text);
  };
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
