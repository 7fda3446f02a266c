const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

const pad2 = (value: number): string => String(value).padStart(2, '0');

/**
 * Rucio's date format `%a, %d %b %Y %H:%M:%S UTC` (RFC 1123 with the literal `UTC`), e.g.
 * `Tue, 02 Dec 2025 11:25:36 UTC`. The Python client turns exactly this shape back into datetimes.
 */
export const formatRucioDate = (date: Date): string =>
  `${WEEKDAYS[date.getUTCDay()]}, ${pad2(date.getUTCDate())} ${MONTHS[date.getUTCMonth()]} ` +
  `${date.getUTCFullYear()} ${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:` +
  `${pad2(date.getUTCSeconds())} UTC`;

/** `%Y-%m-%dT%H:%M:%S`, the format of account details and account usage history. */
export const formatIsoSeconds = (date: Date): string => date.toISOString().slice(0, 19);

/** Renders an ISO string stored in a read model in Rucio's format; null stays null. */
export const rucioDateOrNull = (iso: string | null | undefined): string | null =>
  iso ? formatRucioDate(new Date(iso)) : null;

export const isoSecondsOrNull = (iso: string | null | undefined): string | null =>
  iso ? formatIsoSeconds(new Date(iso)) : null;

const RUCIO_DATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d{2}):(\d{2}):(\d{2}) UTC$/;

/** Parses Rucio's date format; undefined when the text has another shape. */
export const parseRucioDate = (text: string): Date | undefined => {
  const match = RUCIO_DATE.exec(text);
  if (!match) return undefined;
  const [, day, month, year, hours, minutes, seconds] = match;
  return new Date(
    Date.UTC(
      Number(year),
      MONTHS.findIndex((name) => name === month),
      Number(day),
      Number(hours),
      Number(minutes),
      Number(seconds),
    ),
  );
};

const ISO_LIKE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6})Z)?$/;

/**
 * The date formats Rucio's DID filters accept (filter_engine.py `VALID_DATE_FORMATS`):
 * `%Y-%m-%d %H:%M:%S`, the same with `T`, both with `.%fZ`, and Rucio's own format. All UTC.
 * Undefined for any other text or an impossible date.
 */
export const parseFilterDate = (text: string): Date | undefined => {
  const rucio = parseRucioDate(text);
  if (rucio) return rucio;
  const match = ISO_LIKE.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hours, minutes, seconds, fraction] = match;
  const milliseconds = fraction ? Math.floor(Number(fraction.padEnd(6, '0')) / 1000) : 0;
  const date = new Date(
    Date.UTC(
      Number(year),
      Number(month) - 1,
      Number(day),
      Number(hours),
      Number(minutes),
      Number(seconds),
      milliseconds,
    ),
  );
  const exact =
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day) &&
    date.getUTCHours() === Number(hours) &&
    date.getUTCMinutes() === Number(minutes) &&
    date.getUTCSeconds() === Number(seconds);
  return exact ? date : undefined;
};
