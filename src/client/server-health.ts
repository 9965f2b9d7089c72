// Background health checks of every API server a client knows, and the policy that picks which
// one the client talks to (N12: fail over within 2 s of the current member failing).
//
// Policy (pickServer):
//   - The current server stays while it passes its checks (or has not been checked yet).
//   - When it fails a check (error, non-200 /readyz, or no answer within the check timeout — a
//     SIGSTOPped member hangs rather than refusing), the client moves at once to the healthy server
//     listed first; if no server is healthy it stays put (requests still fail over on connection
//     errors, and a cluster-wide outage such as lost etcd quorum is not fixed by switching).
//   - "Going back": the list's order is the preference (agents order their members by
//     server-preference.ts, so a fleet spreads over them). A server listed before the current one is returned to once it has passed
//     its checks continuously for failbackAfterMs (default 30 s), so a member that restarts or flaps
//     does not bounce every client back and forth.
import { errorText } from '../util/error-text.js';
import https from 'node:https';

export interface HealthCheckOptions {
  /** How often every server's /readyz is polled. Default 1000 ms. */
  intervalMs?: number;
  /** A check without an answer after this counts as failed (a hung member). Default 800 ms. */
  timeoutMs?: number;
  /** A preferred (earlier listed) server is returned to after being healthy this long. Default 30 s. */
  failbackAfterMs?: number;
}

export interface ServerState {
  healthy: boolean;
  /** When the server entered its current state (ms since epoch). */
  since: number;
  lastError?: string;
}

/**
 * The index of the server to use. `state` returns undefined for a server not checked yet; such a
 * server counts as healthy for staying on it, but not as "healthy for a while" for failing back.
 */
export function pickServer(
  servers: readonly string[],
  current: number,
  state: (server: string) => ServerState | undefined,
  now: number,
  failbackAfterMs: number,
): number {
  if (servers.length === 0) return 0;
  const cur = Math.min(Math.max(current, 0), servers.length - 1);
  const curState = state(servers[cur]!);
  const curHealthy = curState === undefined || curState.healthy;
  if (curHealthy) {
    for (let i = 0; i < cur; i++) {
      const s = state(servers[i]!);
      if (s?.healthy && now - s.since >= failbackAfterMs) return i;
    }
    return cur;
  }
  for (let i = 0; i < servers.length; i++) {
    if (i !== cur && state(servers[i]!)?.healthy) return i;
  }
  return cur;
}

export interface HealthCheckerOptions extends HealthCheckOptions {
  agentOptions: https.AgentOptions;
  userAgent: string;
  /** Called when a server's state flips (not on every check). */
  onChange(server: string, state: ServerState): void;
  now?: () => number;
}

/** Polls GET /readyz (public: no credentials needed) on every server, in parallel. */
export class ServerHealthChecker {
  private servers: string[] = [];
  private readonly states = new Map<string, ServerState>();
  private readonly agent: https.Agent;
  private timer?: NodeJS.Timeout;
  private readonly inflight = new Set<string>();
  private readonly now: () => number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly failbackAfterMs: number;

  constructor(private readonly o: HealthCheckerOptions) {
    this.intervalMs = o.intervalMs ?? 1000;
    this.timeoutMs = o.timeoutMs ?? 800;
    this.failbackAfterMs = o.failbackAfterMs ?? 30_000;
    this.now = o.now ?? Date.now;
    // A separate connection pool: checks must never queue behind (or starve) real requests.
    this.agent = new https.Agent({ ...o.agentOptions, keepAlive: true, maxSockets: 2 });
  }

  state(server: string): ServerState | undefined {
    return this.states.get(server);
  }

  setServers(servers: readonly string[]): void {
    this.servers = [...servers];
    for (const s of [...this.states.keys()]) if (!servers.includes(s)) this.states.delete(s);
  }

  /** Records an outcome seen elsewhere (a request's connection error), so the policy uses it at once. */
  record(server: string, healthy: boolean, error?: string): void {
    if (!this.servers.includes(server)) return;
    const prev = this.states.get(server);
    if (prev && prev.healthy === healthy) {
      if (error) prev.lastError = error;
      return;
    }
    const next: ServerState = { healthy, since: this.now(), ...(error ? { lastError: error } : {}) };
    this.states.set(server, next);
    this.o.onChange(server, next);
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      for (const s of this.servers) void this.checkOne(s);
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.agent.destroy();
  }

  /** One check of one server; resolves with its outcome. Overlapping checks of a server are skipped. */
  async checkOne(server: string): Promise<void> {
    if (this.inflight.has(server)) return;
    this.inflight.add(server);
    try {
      const error = await this.probe(server);
      this.record(server, error === undefined, error);
    } finally {
      this.inflight.delete(server);
    }
  }

  private probe(server: string): Promise<string | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (err: string | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(err);
      };
      let req: ReturnType<typeof https.request>;
      try {
        req = https.request(new URL('/readyz', server), { method: 'GET', agent: this.agent, headers: { 'User-Agent': this.o.userAgent } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => finish(res.statusCode === 200 ? undefined : `/readyz ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').trim().split('\n').filter((l) => l.startsWith('[-]')).join('; ') || 'not ready'}`));
          res.on('error', (e) => finish(e.message));
        });
      } catch (e) {
        return resolve(errorText(e));
      }
      // A whole-check deadline (not a socket idle timeout): a hung member must fail in timeoutMs.
      const timer = setTimeout(() => {
        finish(`no answer to /readyz within ${this.timeoutMs} ms`);
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (e) => finish(e.message));
      req.end();
    });
  }
}
