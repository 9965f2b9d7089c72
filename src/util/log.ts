// Structured logs: one JSON line per state transition, on stderr so command output stays clean.
import { pino } from 'pino';

export type Logger = pino.Logger;

export function createLogger(component: string, level: string = process.env.SKIFF_LOG_LEVEL ?? 'info'): Logger {
  return pino(
    { name: component, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything, for unit tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
