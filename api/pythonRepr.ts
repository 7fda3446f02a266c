/**
 * Python's `repr()` of the few value kinds `/auth/validate` answers with (Rucio sends the repr of
 * a dict there, not JSON): strings, None, booleans, numbers and naive datetimes.
 */
export type PythonValue = string | number | boolean | null | Date | { readonly [key: string]: PythonValue };

const reprString = (text: string): string => {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text
    .replaceAll('\\', '\\\\')
    .replaceAll('\n', '\\n')
    .replaceAll('\r', '\\r')
    .replaceAll('\t', '\\t')
    .replaceAll(quote, `\\${quote}`);
  return `${quote}${escaped}${quote}`;
};

/** `datetime.datetime(2025, 11, 22, 3, 55, 0, 123456)`: trailing zero seconds/microseconds are left out. */
const reprDatetime = (date: Date): string => {
  const fields = [
    date.getUTCFullYear(),
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
  ];
  const seconds = date.getUTCSeconds();
  const microseconds = date.getUTCMilliseconds() * 1000;
  if (microseconds) fields.push(seconds, microseconds);
  else if (seconds) fields.push(seconds);
  return `datetime.datetime(${fields.join(', ')})`;
};

export const pythonRepr = (value: PythonValue): string => {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return reprString(value);
  if (value instanceof Date) return reprDatetime(value);
  return `{${Object.entries(value)
    .map(([key, item]) => `${reprString(key)}: ${pythonRepr(item)}`)
    .join(', ')}}`;
};
