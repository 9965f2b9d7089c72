// Structured logs: one line per state transition, on stderr so command output stays clean. On a
// terminal they read as text (time, level, message, then the fields); otherwise — a file, a pipe,
// journald — one JSON object per line, for machines and `jq`.
import { createRequire } from 'node:module';
import { pino } from 'pino';

export type Logger = pino.Logger;

export type LogFormat = 'text' | 'json';

/** The format when none is asked for: text on a terminal, JSON otherwise. */
export function defaultLogFormat(): LogFormat {
  const env = process.env.SKIFF_LOG_FORMAT;
  if (env === 'text' || env === 'json') return env;
  return process.stderr.isTTY ? 'text' : 'json';
}

export function createLogger(component: string, format: LogFormat = defaultLogFormat(), level: string = process.env.SKIFF_LOG_LEVEL ?? 'info'): Logger {
  const options = { name: component, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === 'json') return pino(options, pino.destination({ fd: 2, sync: true }));
  // Loaded only for a terminal: processes that log to files (every agent under `skiff up`) never pay for it.
  const pretty = createRequire(import.meta.url)('pino-pretty') as (o: Record<string, unknown>) => NodeJS.WritableStream;
  return pino(
    options,
    pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY === true, singleLine: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l', ignore: 'pid,hostname' }) as unknown as pino.DestinationStream,
  );
}

/** JSON lines appended to a file: a part that runs inside another command (the dashboard under `skiff up`). */
export function fileLogger(component: string, path: string, level: string = process.env.SKIFF_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: component, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: path, sync: true, append: true, mkdir: true }));
}

/** A logger that drops everything, for unit tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
