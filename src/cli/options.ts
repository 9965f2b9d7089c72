// Flag parsing shared by the commands: Go-style durations, host:port, and --config files.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { yaml } from '../util/lazy-yaml.js';
import { formatDuration, parseDuration } from '../util/duration.js';

export function durationArg(value: string): number {
  try {
    return parseDuration(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

export function intArg(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${JSON.stringify(value)} is not a whole number`);
  return Number(value);
}

export function boolArg(value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new InvalidArgumentError(`${JSON.stringify(value)} is not true or false`);
}

export function listArg(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

export function hostPortArg(value: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(value);
  if (!m) throw new InvalidArgumentError(`${JSON.stringify(value)} is not HOST:PORT`);
  return { host: m[1] || '0.0.0.0', port: Number(m[2]) };
}

/**
 * `--config FILE`: a YAML map of flag names (as on the command line, without dashes) to values.
 * Flags given on the command line win over the file.
 */
export function addConfigFile(cmd: Command): Command {
  cmd.option('--config <file>', 'read flags from a YAML file (command-line flags win)');
  cmd.hook('preAction', (thisCommand) => {
    const file = thisCommand.opts().config as string | undefined;
    if (!file) return;
    const doc = yaml().parse(readFileSync(file, 'utf8')) as Record<string, unknown> | null;
    for (const [flag, value] of Object.entries(doc ?? {})) {
      const opt = thisCommand.options.find((o) => o.long === `--${flag}`);
      if (!opt) throw new InvalidArgumentError(`unknown flag ${JSON.stringify(flag)} in ${file}`);
      const key = opt.attributeName();
      if (thisCommand.getOptionValueSource(key) === 'cli') continue;
      // A flag without an argument (`--rejoin`) is a boolean: `false` in the file must mean false.
      if (opt.isBoolean()) {
        thisCommand.setOptionValueWithSource(key, value === true || value === 'true', 'config');
        continue;
      }
      // A list is the flag given once per item (`server: [a, b]` is --server a --server b).
      const items = Array.isArray(value) ? value.map(String) : [String(value)];
      let parsed: unknown = undefined;
      for (const text of items) parsed = opt.parseArg ? opt.parseArg(text, parsed as never) : text;
      thisCommand.setOptionValueWithSource(key, parsed, 'config');
    }
  });
  return cmd;
}

/** A duration flag whose --help shows its default as a duration ("10s"), not milliseconds. */
export function durationOption(flags: string, description: string, defaultMs: number): Option {
  return new Option(flags, description).argParser(durationArg).default(defaultMs, formatDuration(defaultMs));
}

/** `--log-format text|json`; without it, text on a terminal and JSON otherwise. */
export function logFormatOption(): Option {
  return new Option('--log-format <format>', 'text or json (default: text on a terminal, JSON otherwise)').choices(['text', 'json']);
}

/**
 * A listen error in one line that says what to do ("127.0.0.1:6443 (the API server) is already in
 * use by another process; choose another with --listen HOST:PORT"), or undefined for any other error.
 */
/** A failure to write the data directory, said as what to do about it; undefined for any other error. */
export function dataDirErrorMessage(e: unknown, dataDir: string): string | undefined {
  const err = e as { code?: string; path?: string; syscall?: string };
  if (err.path === undefined || !resolve(err.path).startsWith(resolve(dataDir))) return undefined;
  switch (err.code) {
    case 'EROFS':
      return `the data directory ${dataDir} is on a read-only file system (${err.syscall} ${err.path}); the server keeps its database there: make it writable again, or choose another with --data-dir`;
    case 'ENOSPC':
      return `no space left for the data directory ${dataDir} (${err.syscall} ${err.path}): free some space and start again`;
    case 'EACCES':
    case 'EPERM':
      return `this process may not write the data directory ${dataDir} (${err.syscall} ${err.path}): run as its owner, or choose another with --data-dir`;
    default:
      return undefined;
  }
}

export function listenErrorMessage(e: unknown, what: string, remedy: string): string | undefined {
  const err = e as { code?: string; address?: string; port?: number };
  const at = err.address !== undefined ? `${err.address.includes(':') ? `[${err.address}]` : err.address}:${err.port}` : what;
  switch (err.code) {
    case 'EADDRINUSE':
      return `${at} (${what}) is already in use by another process; ${remedy}`;
    case 'EACCES':
      return `${at} (${what}) needs privileges this process lacks (ports below 1024 need root); ${remedy}`;
    case 'EADDRNOTAVAIL':
      return `${at} (${what}) is not an address of this machine; ${remedy}`;
    default:
      return undefined;
  }
}
