import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; `level` comes from DMS_LOG_LEVEL (default info). */
export const createLogger = (level: string, name = 'dms'): Logger => pino({ name, level });

/** A logger that drops everything, for tests and command-line tools that print their own output. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
