import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyLogLine } from './prettyLog.ts';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

/**
 * The service's log on stdout at `level` (DMS_LOG_LEVEL, default info): JSON lines (pino's) for
 * log collectors, or, with `pretty` (DMS_LOG_FORMAT; the default on a terminal), one readable
 * line per entry. The threads and API workers of a process log in its format (it reaches them
 * with the configuration), whatever their own stdout is.
 */
export const createLogger = (level: string, format: LogFormat = 'json', name = 'dms'): Logger =>
  format === 'pretty' ? pino({ name, level }, prettyDestination(process.stdout)) : pino({ name, level });

/** A logger that drops everything, for tests and command-line tools that print their own output. */
export const silentLogger = (): Logger => pino({ level: 'silent' });

/** pino's JSON lines, each written to `output` as one readable line instead. */
const prettyDestination = (output: NodeJS.WriteStream): DestinationStream => {
  const colours = output.isTTY === true && process.env.NO_COLOR === undefined;
  return { write: (line: string) => output.write(prettyLogLine(line, { colours })) };
};
