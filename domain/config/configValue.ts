import { pythonStr } from '../shared/pythonLiteral.ts';

/**
 * Rucio stores configuration values as text (`str(value)`) and types them again on reading
 * (`convert_to_any_type`): true/yes/on and false/no/off become booleans, then integers, then
 * floats; anything else stays text.
 */
export const configValueToText = pythonStr;

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
