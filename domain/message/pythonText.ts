/**
 * How Rucio's messages write a date: Python's `str(datetime)` of a naive UTC datetime,
 * `2026-11-28 15:58:18.123000`, without the fraction when it is zero.
 */
export const pythonDate = (iso: string | null | undefined): string | null => {
  if (!iso) return null;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return null;
  const text = date.toISOString();
  const milliseconds = text.slice(20, 23);
  return `${text.slice(0, 10)} ${text.slice(11, 19)}${milliseconds === '000' ? '' : `.${milliseconds}000`}`;
};

/** Python's `timedelta.seconds` between two dates (whole seconds, days left out), or -1 without both. */
export const pythonDurationSeconds = (from: string | null | undefined, to: string | null | undefined): number => {
  if (!from || !to) return -1;
  const milliseconds = new Date(to).getTime() - new Date(from).getTime();
  if (Number.isNaN(milliseconds)) return -1;
  const seconds = Math.floor(milliseconds / 1000);
  return ((seconds % 86_400) + 86_400) % 86_400;
};
