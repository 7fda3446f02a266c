/**
 * Rucio stores configuration values as text (`str(value)`) and types them again on reading
 * (`convert_to_any_type`): true/yes/on and false/no/off become booleans, then integers, then
 * floats; anything else stays text.
 */
export const configValueToText = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
};

const INTEGER = /^[-+]?\d+$/;
const FLOAT = /^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf(inity)?|nan)$/i;

export const configValueFromText = (text: string): boolean | number | string => {
  const lower = text.trim().toLowerCase();
  if (['true', 'yes', 'on'].includes(lower)) return true;
  if (['false', 'no', 'off'].includes(lower)) return false;
  const trimmed = text.trim().replaceAll('_', '');
  if (INTEGER.test(trimmed)) return Number(trimmed);
  if (FLOAT.test(trimmed)) {
    const number = Number(trimmed);
    // JSON has no NaN or Infinity; keep those as the text they came as.
    return Number.isFinite(number) ? number : text;
  }
  return text;
};
