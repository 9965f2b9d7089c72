// End-to-end harness: real `skiff` processes on loopback, real kubectl, bounded polling.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { waitForReady } from '../../src/client/wait.js';
import { ApiClient } from '../../src/client/rest.js';

export const SKIFF_BIN = fileURLToPath(new URL('../../../bin/skiff.js', import.meta.url));

export function kubectlBinary(version?: string): string {
  if (!version) return 'kubectl';
  const onPath = execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim();
  const dir = dirname(realpathSync(onPath));
  return join(dir, `kubectl.${version}`);
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class TestServer {
  readonly dataDir: string;
  readonly cacheDir: string;
  proc?: ManagedProcess;
  constructor(readonly name = 'skiff-test', dataDir?: string) {
    this.dataDir = dataDir ?? mkdtempSync(join(tmpdir(), `${name}-`));
    this.cacheDir = mkdtempSync(join(tmpdir(), `${name}-kcache-`));
  }

  get kubeconfig(): string {
    return join(this.dataDir, 'kubeconfig');
  }

  get logFile(): string {
    return join(this.dataDir, 'server.log');
  }

  async start(extraArgs: string[] = []): Promise<void> {
    rmSync(this.kubeconfig, { force: true });
    this.proc = startProcess({
      name: 'server',
      command: process.execPath,
      args: [SKIFF_BIN, 'server', '--data-dir', this.dataDir, '--listen', '127.0.0.1:0', ...extraArgs],
      output: this.logFile,
    });
    const exited = this.proc.exited.then(({ code, signal }) => {
      throw new Error(`server exited early (code ${code}, signal ${signal}):\n${this.logs().slice(-3000)}`);
    });
    await Promise.race([waitForReady(this.kubeconfig, 30_000), exited]);
    exited.catch(() => {});
  }

  logs(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }

  client(): ApiClient {
    return ApiClient.fromKubeconfig(this.kubeconfig, { timeoutMs: 10_000 });
  }

  kubectl(args: string[], opts: { version?: string; input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return new Promise((resolve) => {
      const child = execFile(
        kubectlBinary(opts.version),
        ['--kubeconfig', this.kubeconfig, '--cache-dir', this.cacheDir, ...args],
        { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
          resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  /** kubectl that must succeed; returns stdout. */
  async k(args: string[], opts: { version?: string; input?: string } = {}): Promise<string> {
    const r = await this.kubectl(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  async stop(): Promise<void> {
    await this.proc?.stop(10_000);
  }

  kill(sig: NodeJS.Signals = 'SIGKILL'): void {
    this.proc?.signal(sig);
  }

  cleanup(): void {
    rmSync(this.cacheDir, { recursive: true, force: true });
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Polls fn until it returns a truthy value; fails after timeoutMs with the last value or error. */
export async function eventually<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
