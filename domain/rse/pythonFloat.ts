const DIGITS = String.raw`\d(?:_?\d)*`;
const DECIMAL = new RegExp(String.raw`^[+-]?(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`);

/**
 * Python's `float(text)`, which Rucio applies to attribute values and bounds in `key<n` / `key>n`
 * expressions: surrounding blanks, `_` between digits, `inf`, `infinity` and `nan` are accepted.
 * Undefined where Python raises ValueError.
 */
export const pythonFloat = (text: string): number | undefined => {
  const trimmed = text.trim();
  const sign = trimmed.startsWith('-') ? -1 : 1;
  const unsigned = trimmed.replace(/^[+-]/, '').toLowerCase();
  if (unsigned === 'inf' || unsigned === 'infinity') return sign * Infinity;
  if (unsigned === 'nan') return NaN;
  if (!DECIMAL.test(trimmed)) return undefined;
  return Number(trimmed.replaceAll('_', ''));
};
