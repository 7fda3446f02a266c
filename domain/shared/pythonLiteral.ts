import { PROTOTYPE_KEYS } from './names.ts';

/**
 * A safe reader for the Python literals Rucio evaluates with `ast.literal_eval`: the Python
 * client sends DID search filters as `str()` of a list of dicts (`[{'name': 'f*', 'length.gt': 0}]`).
 * Only data is read: dicts, lists, tuples, strings, numbers, True, False and None. Nothing is
 * ever evaluated.
 */
export type PythonLiteral = string | number | boolean | null | PythonLiteral[] | { [key: string]: PythonLiteral };

/**
 * Python's `str()` of a JSON value, as Rucio writes one into a message (`%s`) or stores a
 * configuration value: text as it is, `True`/`False`, `None`, numbers; anything else as JSON.
 */
export const pythonStr = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
};

export class PythonLiteralError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PythonLiteralError';
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

const NUMBER = /^[0-9][0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9]+)?|^\.[0-9][0-9_]*([eE][+-]?[0-9]+)?/;

/** Lists and dicts inside each other, at most (filters nest two deep). */
const MAX_DEPTH = 32;

export const parsePythonLiteral = (text: string): PythonLiteral => {
  let index = 0;
  let depth = 0;
  const fail = (what: string): never => {
    throw new PythonLiteralError(`${what} at position ${index} of ${JSON.stringify(text)}`);
  };
  const skipSpace = () => {
    while (index < text.length && /\s/.test(text[index]!)) index += 1;
  };
  const expect = (char: string) => {
    skipSpace();
    if (text[index] !== char) fail(`expected '${char}'`);
    index += 1;
  };

  const readString = (): string => {
    let value = '';
    // Adjacent literals concatenate: 'a' 'b' is 'ab'.
    do {
      if (text[index] === 'u' || text[index] === 'U') index += 1;
      const quote = text[index];
      if (quote !== "'" && quote !== '"') fail('expected a string');
      index += 1;
      for (;;) {
        if (index >= text.length) fail('unterminated string');
        const char = text[index]!;
        index += 1;
        if (char === quote) break;
        if (char === '\n') fail('newline in string');
        if (char !== '\\') {
          value += char;
          continue;
        }
        const escaped = text[index];
        index += 1;
        if (escaped === undefined) fail('unterminated string');
        if (escaped === 'x' || escaped === 'u') {
          const length = escaped === 'x' ? 2 : 4;
          const hex = text.slice(index, index + length);
          if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(hex)) fail('bad escape');
          value += String.fromCharCode(parseInt(hex, 16));
          index += length;
        } else if (escaped! in ESCAPES) value += ESCAPES[escaped!];
        else value += `\\${escaped}`;
      }
      skipSpace();
    } while (index < text.length && /['"]/.test(text[index]!));
    return value;
  };

  const readNumber = (negative: boolean): number => {
    const match = NUMBER.exec(text.slice(index));
    if (!match) fail('expected a value');
    index += match![0].length;
    const value = Number(match![0].replaceAll('_', ''));
    if (!Number.isFinite(value)) fail('bad number');
    return negative ? -value : value;
  };

  const readSequence = (close: string): PythonLiteral[] => {
    const items: PythonLiteral[] = [];
    skipSpace();
    while (text[index] !== close) {
      items.push(readValue());
      skipSpace();
      if (text[index] === ',') index += 1;
      else if (text[index] !== close) fail(`expected ',' or '${close}'`);
      skipSpace();
    }
    index += 1;
    return items;
  };

  const readDict = (): { [key: string]: PythonLiteral } => {
    const dict: { [key: string]: PythonLiteral } = {};
    skipSpace();
    while (text[index] !== '}') {
      const key = readValue();
      if (typeof key !== 'string' && typeof key !== 'number' && typeof key !== 'boolean' && key !== null)
        fail('unhashable key');
      // Assigned to an object, these would set its prototype, not an entry.
      if (PROTOTYPE_KEYS.has(String(key))) fail(`reserved key '${String(key)}'`);
      expect(':');
      dict[String(key)] = readValue();
      skipSpace();
      if (text[index] === ',') index += 1;
      else if (text[index] !== '}') fail("expected ',' or '}'");
      skipSpace();
    }
    index += 1;
    return dict;
  };

  const readValue = (): PythonLiteral => {
    skipSpace();
    const char = text[index];
    if (char === undefined) return fail('unexpected end');
    if (char === '{' || char === '[' || char === '(') {
      index += 1;
      depth += 1;
      if (depth > MAX_DEPTH) fail('nested too deep');
      const value = char === '{' ? readDict() : readSequence(char === '[' ? ']' : ')');
      depth -= 1;
      return value;
    }
    if (char === "'" || char === '"' || ((char === 'u' || char === 'U') && /['"]/.test(text[index + 1] ?? '')))
      return readString();
    for (const [word, value] of [
      ['True', true],
      ['False', false],
      ['None', null],
    ] as const) {
      if (text.startsWith(word, index) && !/\w/.test(text[index + word.length] ?? '')) {
        index += word.length;
        return value;
      }
    }
    if (char === '-' || char === '+') {
      index += 1;
      skipSpace();
      return readNumber(char === '-');
    }
    return readNumber(false);
  };

  const value = readValue();
  skipSpace();
  if (index !== text.length) fail('unexpected text');
  return value;
};
