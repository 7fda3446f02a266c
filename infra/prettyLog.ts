/**
 * One pino JSON line as a line for people: `15:46:30.123 INFO  message key=value …`, the time
 * in UTC, the fields that say where (pid, hostname, the logger's name) left out, an error's stack
 * on the lines after. A line that is not JSON passes as it is.
 */

const LEVELS: Readonly<Record<number, readonly [name: string, colour: string]>> = {
  10: ['TRACE', '\x1b[90m'],
  20: ['DEBUG', '\x1b[36m'],
  30: ['INFO ', '\x1b[32m'],
  40: ['WARN ', '\x1b[33m'],
  50: ['ERROR', '\x1b[31m'],
  60: ['FATAL', '\x1b[35m'],
};
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
/** pino's own fields, shown in their place (time, level, message) or not at all. */
const OWN_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);

export const prettyLogLine = (line: string, options: Readonly<{ colours: boolean }>): string => {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `${line.trimEnd()}\n`;
  const fields = new Map(Object.entries(entry));
  const time = fields.get('time');
  const level = fields.get('level');
  const [levelName, colour] = (typeof level === 'number' ? LEVELS[level] : undefined) ?? ['     ', ''];
  const clock = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
  const message = typeof fields.get('msg') === 'string' ? String(fields.get('msg')) : '';
  const parts: string[] = [];
  let stack: string | undefined;
  for (const [key, value] of fields) {
    if (OWN_FIELDS.has(key)) continue;
    if (key === 'err' && typeof value === 'object' && value !== null && 'stack' in value) {
      stack = String(value.stack);
      continue;
    }
    parts.push(`${key}=${fieldText(value)}`);
  }
  const paint = (text: string, code: string) => (options.colours && code ? `${code}${text}${RESET}` : text);
  const head = `${paint(clock, DIM)} ${paint(levelName, colour)} ${message}`;
  const tail = parts.length > 0 ? ` ${paint(parts.join(' '), DIM)}` : '';
  return `${head}${tail}\n${stack ? `${indent(stack)}\n` : ''}`;
};

/** A field's value as one token: bare when it has no space or quote, else as JSON. */
const fieldText = (value: unknown): string => {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
};

const indent = (text: string): string =>
  text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
