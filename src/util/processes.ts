// Child processes in their own process groups, so stopping one stops everything it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Signals the whole process group. */
  signal(sig: NodeJS.Signals): void;
  /** `sig` (SIGTERM unless told), then SIGKILL after graceMs if it has not exited. */
  stop(graceMs?: number, sig?: NodeJS.Signals): Promise<void>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where stdout+stderr go: a file path, or 'inherit'. */
  output: string | 'inherit' | 'pipe';
}

export function startProcess(opts: StartOptions): ManagedProcess {
  let out: WriteStream | undefined;
  const stdio = opts.output === 'inherit' ? 'inherit' : 'pipe';
  const child = spawn(opts.command, opts.args, { env: opts.env ?? process.env, cwd: opts.cwd, detached: true, stdio: ['ignore', stdio, stdio] });
  if (opts.output !== 'inherit' && opts.output !== 'pipe') {
    out = createWriteStream(opts.output, { flags: 'a' });
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      if (!out) return resolve({ code, signal });
      // The log file holds the last words (why it exited) once `exited` settles: the pipes drain
      // first, unless a child the process left behind keeps them open.
      const drained = Promise.all([child.stdout, child.stderr].map((s) => (s && !s.readableEnded ? once(s, 'end').catch(() => {}) : undefined)));
      const cap = new Promise((r) => setTimeout(r, 1_000).unref());
      void Promise.race([drained, cap]).then(() => {
        child.stdout?.unpipe(out);
        child.stderr?.unpipe(out);
        out!.end(() => resolve({ code, signal }));
      });
    });
    child.on('error', () => resolve({ code: 127, signal: null }));
  });
  let done = false;
  void exited.then(() => (done = true));
  const signal = (sig: NodeJS.Signals) => {
    if (done || child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      /* already gone */
    }
  };
  return {
    name: opts.name,
    child,
    exited,
    signal,
    async stop(graceMs = 10_000, sig: NodeJS.Signals = 'SIGTERM') {
      if (done) return;
      signal(sig);
      const t = setTimeout(() => signal('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
    },
  };
}

/** The last `n` lines of a process's output file, for an error that says why it stopped. */
export function lastLines(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}
