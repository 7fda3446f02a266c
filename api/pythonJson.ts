/**
 * JSON as Python's `json.dumps` writes it by default: `", "` and `": "` separators and non-ASCII
 * characters escaped. Rucio renders its error bodies this way.
 */
export const pythonJson = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return escapeNonAscii(JSON.stringify(value));
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    return `{${entries.map(([key, item]) => `${pythonJson(key)}: ${pythonJson(item)}`).join(', ')}}`;
  }
  return 'null';
};

const escapeNonAscii = (json: string): string =>
  json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
