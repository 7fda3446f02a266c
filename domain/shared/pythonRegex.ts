import { RE2JS } from 're2js';

/**
 * Regular expressions that clients and admins give (metadata conventions, subscription filters,
 * the conveyor's suspicious patterns, the recoverer's policy) are Python's, applied as Python's
 * `re.match`: anchored at the start of the text, not at its end.
 *
 * They run on RE2 (the `re2js` port), never on JavaScript's backtracking engine: matching takes
 * time linear in the text whatever the expression, so `(a+)+$` against `aaaa…!` answers at once
 * instead of holding the event loop for minutes. What RE2 cannot run in linear time
 * (backreferences, lookarounds, conditionals) is refused when the expression is stored, with the
 * reason.
 *
 * Python and RE2 agree on most syntax (`(?P<name>…)`, `\A`, `(?i)`, classes, counted repeats up
 * to 1000). Translated here: `\Z` (RE2's `\z`), `\uXXXX` and `\UXXXXXXXX` (`\x{…}`), `(?#…)`
 * comments, and a leading `(?x)` (verbose: whitespace and `#` comments outside classes dropped).
 * Left as RE2 has them: `$` matches only at the very end (Python's also matches before a final
 * newline), `\d` and `\w` are ASCII (Python's are Unicode).
 */

/** Longest expression accepted. */
export const MAX_PATTERN_LENGTH = 1000;

/** Does the expression match at the start of the text (`re.match`)? */
export type StartMatcher = (text: string) => boolean;

/** An expression this server will not run, with the reason (the caller names the field). */
export class UnsupportedPattern extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UnsupportedPattern';
  }
}

const NEEDS_BACKTRACKING =
  'this server runs regular expressions in linear time (RE2), which has no backreferences, lookarounds or conditionals';

/** Python's spelling rewritten for RE2, or UnsupportedPattern saying why it cannot be. */
const toRe2 = (pattern: string): string => {
  let flags = '';
  let index = 0;
  // A leading inline flag group: `(?i)`, `(?s)`, `(?x)`, ... (Python allows them only there).
  const inline = /^\(\?([aiLmsux]+)\)/.exec(pattern);
  if (inline) {
    for (const flag of inline[1]!) if ('ims'.includes(flag) && !flags.includes(flag)) flags += flag;
    index = inline[0].length;
  }
  const verbose = inline?.[1]!.includes('x') ?? false;
  let out = '';
  let inClass = false;
  /** Where the current class's members start: a `]` there is a member, not the end. */
  let classBody = 0;
  while (index < pattern.length) {
    const char = pattern[index]!;
    if (char === '\\') {
      const next = pattern[index + 1];
      if (next === undefined) throw new UnsupportedPattern('it ends with a lone backslash');
      if (!inClass && /[1-9]/.test(next))
        throw new UnsupportedPattern(`the backreference \\${next} needs backtracking: ${NEEDS_BACKTRACKING}`);
      if (next === 'Z') out += '\\z';
      else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(pattern.slice(index + 2, index + 6))) {
        out += `\\x{${pattern.slice(index + 2, index + 6)}}`;
        index += 6;
        continue;
      } else if (next === 'U' && /^[0-9a-fA-F]{8}$/.test(pattern.slice(index + 2, index + 10))) {
        out += `\\x{${pattern.slice(index + 2, index + 10)}}`;
        index += 10;
        continue;
      } else out += char + next;
      index += 2;
      continue;
    }
    if (inClass) {
      // `]` right after `[` or `[^` is a member in both dialects.
      if (char === ']' && index !== classBody) inClass = false;
      out += char;
      index += 1;
      continue;
    }
    if (char === '[') {
      inClass = true;
      classBody = pattern[index + 1] === '^' ? index + 2 : index + 1;
      out += char;
      index += 1;
      continue;
    }
    if (verbose && /\s/.test(char)) {
      index += 1;
      continue;
    }
    if (verbose && char === '#') {
      const end = pattern.indexOf('\n', index);
      index = end === -1 ? pattern.length : end + 1;
      continue;
    }
    if (char === '(' && pattern[index + 1] === '?') {
      const rest = pattern.slice(index + 2, index + 4);
      if (rest.startsWith('#')) {
        const end = pattern.indexOf(')', index);
        if (end === -1) throw new UnsupportedPattern('a (?# comment is not closed');
        index = end + 1;
        continue;
      }
      if (rest.startsWith('P='))
        throw new UnsupportedPattern(`the backreference (?P=…) needs backtracking: ${NEEDS_BACKTRACKING}`);
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!')
        throw new UnsupportedPattern(
          `the lookaround (?${rest.slice(0, rest[0] === '<' ? 2 : 1)}…) needs backtracking: ${NEEDS_BACKTRACKING}`,
        );
      if (rest.startsWith('('))
        throw new UnsupportedPattern(`the conditional (?(…)…) needs backtracking: ${NEEDS_BACKTRACKING}`);
    }
    out += char;
    index += 1;
  }
  // \A: the match starts where the text does, whatever (?m) says about ^.
  return `${flags ? `(?${flags})` : ''}\\A(?:${out})`;
};

/** Compiled expressions (and refusals) by source: conventions and filters are checked on every write. */
const cache = new Map<string, StartMatcher | UnsupportedPattern>();
const CACHE_SIZE = 2000;

/**
 * The matcher of a Python expression, or UnsupportedPattern (too long, invalid, or needing
 * backtracking), thrown with the reason.
 */
export const compilePythonPattern = (pattern: string): StartMatcher => {
  const known = cache.get(pattern);
  if (known instanceof UnsupportedPattern) throw known;
  if (known) return known;
  let compiled: StartMatcher | UnsupportedPattern;
  if (pattern.length > MAX_PATTERN_LENGTH) {
    compiled = new UnsupportedPattern(`it is longer than ${MAX_PATTERN_LENGTH} characters`);
  } else {
    try {
      const expression = RE2JS.compile(toRe2(pattern));
      compiled = (text) => expression.test(text);
    } catch (error) {
      compiled =
        error instanceof UnsupportedPattern
          ? error
          : new UnsupportedPattern(error instanceof Error ? error.message : String(error));
    }
  }
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(pattern, compiled);
  if (compiled instanceof UnsupportedPattern) throw compiled;
  return compiled;
};

/** Why the expression cannot be used here, or undefined when it can. */
export const pythonPatternProblem = (pattern: string): string | undefined => {
  try {
    compilePythonPattern(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof UnsupportedPattern) return error.reason;
    throw error;
  }
};
