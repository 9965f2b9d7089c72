// The one client every skiff component uses: typed JSON requests and watch streams against a
// *list* of API servers, failing over between them on connection errors and 503s. With
// `healthCheck` set it also polls every server's /readyz in the background and switches away from
// a failed (or hung) current server within about interval + timeout, aborting the requests and
// watch streams still open to it so informers re-watch on the new one (policy: server-health.ts).
import { errorText } from '../util/error-text.js';
import { userAgent } from '../version.js';
import https from 'node:https';
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import { constants as h2 } from 'node:http2';
import type { Readable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { StatusError } from '../api/errors.js';
import type { KubeList, KubeObject, Status, WatchEvent } from '../api/types.js';
import { parseKubeconfig } from '../pki/kubeconfig.js';
import { ServerHealthChecker, pickServer, type HealthCheckOptions, type ServerState } from './server-health.js';
import type { ClientMetrics } from './metrics.js';
import { H2Sessions } from './h2-sessions.js';
import { systemClock } from '../util/clock.js';

export interface ClientCredentials {
  caPem: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
}

export interface ClientOptions extends ClientCredentials {
  servers: string[];
  /** Per-request timeout for non-watch requests. */
  timeoutMs?: number;
  userAgent?: string;
  /** Background /readyz checks of every server and health-based switching (agents use this). */
  healthCheck?: HealthCheckOptions;
  /** Where requests are counted and timed (rest_client_*, or a benchmark's own record). */
  metrics?: Pick<ClientMetrics, 'request'>;
  /**
   * Every request and watch as a stream on one HTTP/2 connection per server, as client-go does
   * (a fleet of simulated nodes); by default HTTP/1.1 over up to 64 keep-alive connections.
   */
  http2?: boolean;
}

/** An answer's head, and its body to read. */
interface Answer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}


/** One request as sent, with the hooks that time it and keep it cuttable. */
interface Outgoing {
  server: string;
  method: string;
  url: URL;
  headers: Record<string, string | string[]>;
  body: string | Buffer | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  urgent: boolean;
  answered(statusCode: number): void;
  failed(): void;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Sent with the request as well (e.g. Impersonate-User). */
  headers?: Record<string, string | string[]>;
  /**
   * A heartbeat (a node's Lease renewal): over HTTP/2 it takes the next free slot ahead of the
   * requests already waiting. Thousands of simulated nodes share one client, where a renewal would
   * otherwise wait behind other nodes' pod writes, which a kubelet's own connection never does.
   */
  urgent?: boolean;
}

/** The server could not be reached (as opposed to answering with an error). */
export class ConnectionError extends Error {
  constructor(readonly server: string, cause: unknown) {
    super(`cannot reach ${server}: ${errorText(cause)}`);
  }
}

/** A request that got no answer within its timeout (the server may still be fine, only slow). */
class RequestTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`request timed out after ${timeoutMs} ms`);
  }
}

function buildPath(path: string, query?: RequestOptions['query']): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

function statusFrom(code: number, body: string): StatusError {
  try {
    const parsed = JSON.parse(body) as Partial<Status>;
    if (parsed.kind === 'Status') {
      const err = new StatusError(parsed.code ?? code, parsed.reason ?? '', parsed.message ?? '', parsed.details);
      return err;
    }
  } catch {
    /* not a Status */
  }
  return new StatusError(code, code >= 500 ? 'InternalError' : '', body.slice(0, 500) || `HTTP ${code}`);
}

const IDEMPOTENT = new Set(['GET', 'HEAD']);
/** client-go's default for requests refused with 429 and a Retry-After. */
const MAX_RETRIES_AFTER_429 = 10;

/** Retry-After in milliseconds (delta-seconds only, as the API server sends it); undefined when absent or not a number. */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim()) * 1000;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

function neverSent(e: unknown): boolean {
  return NOT_SENT_CODES.has((e as { code?: string }).code ?? '');
}

export class ApiClient {
  private servers: string[];
  private current = 0;
  private readonly agent: https.Agent;
  private readonly h2?: H2Sessions;
  private readonly opts: ClientOptions;
  private listeners: ((server: string, reason: string) => void)[] = [];
  private healthListeners: ((server: string, state: ServerState) => void)[] = [];
  /** HTTP/1.1 requests (incl. watch streams) open per server, so abandoning a server can cut them. */
  private readonly inflight = new Map<string, Set<ClientRequest>>();
  private readonly health?: ServerHealthChecker;
  private readonly failbackTimer?: NodeJS.Timeout;

  constructor(opts: ClientOptions) {
    if (opts.servers.length === 0) throw new Error('ApiClient needs at least one server');
    this.opts = opts;
    this.servers = [...opts.servers];
    const agentOptions: https.AgentOptions = {
      ca: opts.caPem,
      ...(opts.clientCertPem ? { cert: opts.clientCertPem } : {}),
      ...(opts.clientKeyPem ? { key: opts.clientKeyPem } : {}),
    };
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 64, ...agentOptions });
    if (opts.http2) this.h2 = new H2Sessions(agentOptions, opts.timeoutMs ? { connectTimeoutMs: opts.timeoutMs } : {});
    if (opts.healthCheck) {
      this.health = new ServerHealthChecker({
        ...opts.healthCheck,
        agentOptions,
        userAgent: opts.userAgent ?? userAgent('skiff'),
        onChange: (server, state) => this.healthChanged(server, state),
      });
      this.health.setServers(this.servers);
      this.health.start();
      // Fail-back depends on time passing, not only on a state flip.
      this.failbackTimer = setInterval(() => this.reconsider(), this.health.intervalMs);
      this.failbackTimer.unref();
    }
  }

  static fromKubeconfig(path: string, extra: Partial<ClientOptions> = {}): ApiClient {
    const kc = parseKubeconfig(readFileSync(path, 'utf8'), (p) => readFileSync(p, 'utf8'));
    if (!kc.caPem) throw new Error(`${path}: no certificate-authority data`);
    return new ApiClient({
      // The kubeconfig's server first; an HA cluster's members after it, to fail over to.
      servers: [...new Set([kc.server, ...kc.members])],
      caPem: kc.caPem,
      ...(kc.clientCertPem ? { clientCertPem: kc.clientCertPem } : {}),
      ...(kc.clientKeyPem ? { clientKeyPem: kc.clientKeyPem } : {}),
      ...(kc.token ? { token: kc.token } : {}),
      ...extra,
    });
  }

  /**
   * A client with the same credentials for other servers (asking one member something, not
   * failing over): no health checks of its own.
   */
  forServers(servers: string[], extra: Partial<ClientOptions> = {}): ApiClient {
    const { healthCheck: _h, ...rest } = this.opts;
    return new ApiClient({ ...rest, servers, ...extra });
  }

  get server(): string {
    return this.servers[this.current]!;
  }

  get serverList(): readonly string[] {
    return this.servers;
  }

  /** The health of a server as last checked (undefined without health checks or before the first). */
  serverState(server: string): ServerState | undefined {
    return this.health?.state(server);
  }

  /**
   * Replaces the server list (e.g. from discovered endpoints; the order is the preference),
   * keeping the current server if still listed, else choosing by health.
   */
  setServers(servers: string[]): void {
    const list = [...new Set(servers.filter(Boolean))];
    if (list.length === 0) return;
    const cur = this.server;
    this.servers = list;
    this.health?.setServers(list);
    const idx = list.indexOf(cur);
    this.current = idx >= 0 ? idx : 0;
    if (idx < 0) {
      this.current = this.health ? pickServer(list, 0, (s) => this.health!.state(s), Date.now(), this.health.failbackAfterMs) : 0;
      for (const l of this.listeners) l(this.server, `${cur} is no longer listed`);
    }
    this.reconsider();
  }

  /** Called with the new current server and why, whenever the client switches. */
  onFailover(fn: (server: string, reason: string) => void): void {
    this.listeners.push(fn);
  }

  /** Called when a server's health flips (health checks only). */
  onHealthChange(fn: (server: string, state: ServerState) => void): void {
    this.healthListeners.push(fn);
  }

  private switchTo(idx: number, reason: string): void {
    if (idx === this.current || idx < 0 || idx >= this.servers.length) return;
    this.current = idx;
    for (const l of this.listeners) l(this.server, reason);
  }

  /** A request to servers[from] could not connect (or got 503): move on. */
  private failover(from: number, why: string): void {
    if (this.servers.length < 2) return;
    const server = this.servers[from];
    if (server !== undefined) this.health?.record(server, false, why);
    if (this.current !== from) return;
    let next = this.health ? pickServer(this.servers, from, (s) => this.health!.state(s), Date.now(), this.health.failbackAfterMs) : from;
    // Nothing known healthy (or no health checks): plain round robin.
    if (next === from) next = (from + 1) % this.servers.length;
    this.switchTo(next, `${server}: ${why}`);
  }

  private healthChanged(server: string, state: ServerState): void {
    for (const l of this.healthListeners) l(server, state);
    // A failed server's open requests and watches would hang (SIGSTOP) or fail late: cut them now,
    // so their callers retry against the server chosen below.
    if (!state.healthy) this.abortRequestsTo(server, `${server} failed its health check: ${state.lastError ?? 'unhealthy'}`);
    this.reconsider();
  }

  /** Applies the health policy (also run on every check, so fail-back happens once its delay passes). */
  private reconsider(): void {
    if (!this.health) return;
    const next = pickServer(this.servers, this.current, (s) => this.health!.state(s), Date.now(), this.health.failbackAfterMs);
    if (next === this.current) return;
    const from = this.server;
    const fromState = this.health.state(from);
    this.switchTo(next, fromState && !fromState.healthy ? `${from} is unhealthy: ${fromState.lastError ?? ''}` : `back to preferred server (healthy for ${this.health.failbackAfterMs} ms)`);
  }

  private abortRequestsTo(server: string, why: string): void {
    this.h2?.drop(server, new Error(why));
    const reqs = this.inflight.get(server);
    if (!reqs) return;
    for (const r of reqs) r.destroy(new Error(why));
    reqs.clear();
  }

  close(): void {
    this.health?.stop();
    if (this.failbackTimer) clearInterval(this.failbackTimer);
    this.agent.destroy();
    this.h2?.close();
  }

  private send(server: string, method: string, path: string, o: RequestOptions, body: string | Buffer | undefined): Promise<Answer> {
    const url = new URL(path, server);
    const headers: Record<string, string | string[]> = { ...o.headers, Accept: o.accept ?? 'application/json', 'User-Agent': this.opts.userAgent ?? userAgent('skiff') };
    if (this.opts.token) headers.Authorization = `Bearer ${this.opts.token}`;
    if (body !== undefined) {
      headers['Content-Type'] = o.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const metrics = this.opts.metrics;
    const sent = metrics ? performance.now() : 0;
    let answered = false;
    const out: Outgoing = {
      server,
      method,
      url,
      headers,
      body,
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? this.opts.timeoutMs,
      urgent: o.urgent === true,
      answered: (statusCode) => {
        answered = true;
        metrics?.request(method, url, statusCode, (performance.now() - sent) / 1000);
      },
      // No answer at all (a stream cut after its answer, such as a watch, was answered).
      failed: () => answered || metrics?.request(method, url, undefined, (performance.now() - sent) / 1000),
    };
    return this.h2 ? sendH2(this.h2, out) : this.sendH1(out);
  }

  private sendH1(out: Outgoing): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = https.request(out.url, { method: out.method, headers: out.headers, agent: this.agent, ...(out.signal ? { signal: out.signal } : {}) }, (res) => {
        out.answered(res.statusCode ?? 0);
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
      });
      req.once('error', out.failed);
      // Kept to cut when the server is abandoned (HTTP/2 streams go with their session: H2Sessions.drop).
      let open = this.inflight.get(out.server);
      if (!open) this.inflight.set(out.server, (open = new Set()));
      open.add(req);
      req.once('close', () => open.delete(req));
      const timeoutMs = out.timeoutMs;
      if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new RequestTimeoutError(timeoutMs)));
      req.on('error', reject);
      req.end(out.body);
    });
  }

  /**
   * Sends as sendWithFailover does, and as client-go does sends again after a 429 that says when
   * (Retry-After): the server refused it before doing anything (API Priority and Fairness), so
   * even a write is safe to repeat. At most MAX_RETRIES_AFTER_429 times, then the 429 is the answer.
   */
  private async send429Aware(method: string, path: string, o: RequestOptions): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.sendWithFailover(method, path, o);
      const wait = res.statusCode === 429 ? retryAfterMs(res.headers['retry-after']) : undefined;
      if (wait === undefined || attempt >= MAX_RETRIES_AFTER_429) return res;
      res.body.resume();
      await systemClock.sleep(wait, o.signal);
    }
  }

  /** Sends to the current server; on a connection error tries each other server once. */
  private async sendWithFailover(method: string, path: string, o: RequestOptions): Promise<Answer> {
    const body = o.body === undefined ? undefined : typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body : JSON.stringify(o.body);
    let lastError: unknown;
    for (let i = 0; i < this.servers.length; i++) {
      const idx = this.current;
      const server = this.servers[idx]!;
      try {
        const res = await this.send(server, method, path, o, body);
        // A server that is shutting down or has lost its store answers 503: another may not have.
        if (res.statusCode === 503 && this.servers.length > 1 && i < this.servers.length - 1) {
          res.body.resume();
          this.failover(idx, 'answered 503');
          continue;
        }
        return res;
      } catch (e) {
        if (o.signal?.aborted) throw e;
        lastError = new ConnectionError(server, e);
        // One slow request says little about the server (a big list, a busy moment): with health
        // checks running, whether it is down is theirs to decide. Marking it down here would cut
        // every other request and watch on it. (A server already known to be down is left at once.)
        if (e instanceof RequestTimeoutError && this.health && this.health.state(server)?.healthy !== false) throw lastError;
        this.failover(idx, errorText(e));
        // A write that may have reached the server must not be sent again elsewhere (it could
        // apply twice); only a refused connection proves nothing was sent.
        if (!IDEMPOTENT.has(method) && !neverSent(e)) throw lastError;
      }
    }
    throw lastError;
  }

  async request<T = unknown>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const res = await this.send429Aware(method, buildPath(path, o.query), o);
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const code = res.statusCode;
    if (code < 200 || code >= 300) throw statusFrom(code, text);
    if (!text) return undefined as T;
    const type = res.headers['content-type'] ?? '';
    return (type.includes('json') ? JSON.parse(text) : text) as T;
  }

  get<T = KubeObject>(path: string, o?: RequestOptions): Promise<T> {
    return this.request<T>('GET', path, o);
  }
  /** A collection, as an informer lists it. */
  list<T extends KubeObject = KubeObject>(path: string, query: RequestOptions['query'], signal?: AbortSignal): Promise<KubeList<T>> {
    return this.request<KubeList<T>>('GET', path, { query, ...(signal ? { signal } : {}) });
  }
  create<T = KubeObject>(path: string, body: unknown, o: RequestOptions = {}): Promise<T> {
    return this.request<T>('POST', path, { ...o, body });
  }
  replace<T = KubeObject>(path: string, body: unknown, o: RequestOptions = {}): Promise<T> {
    return this.request<T>('PUT', path, { ...o, body });
  }
  patch<T = KubeObject>(path: string, body: unknown, type: 'merge' | 'strategic' | 'json' | 'apply' = 'merge', o: RequestOptions = {}): Promise<T> {
    const contentType = {
      merge: 'application/merge-patch+json',
      strategic: 'application/strategic-merge-patch+json',
      json: 'application/json-patch+json',
      apply: 'application/apply-patch+yaml',
    }[type];
    return this.request<T>('PATCH', path, { ...o, body, contentType });
  }
  delete<T = unknown>(path: string, body?: unknown, o: RequestOptions = {}): Promise<T> {
    return this.request<T>('DELETE', path, { ...o, ...(body !== undefined ? { body } : {}) });
  }

  /**
   * Streams watch events until the server ends the stream or the signal aborts. A 410 (on the
   * request or as an ERROR event) surfaces as a StatusError with code 410 so callers relist.
   */
  async *watch<T = KubeObject>(path: string, query: RequestOptions['query'], signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const body = await this.stream(path, { ...query, watch: 'true' }, signal);
    let buf = '';
    // A multi-byte character may be split across chunks: decode as a stream, not chunk by chunk.
    body.setEncoding('utf8');
    try {
      for await (const chunk of body) {
        buf += chunk as string;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as WatchEvent<T>;
          if (ev.type === 'ERROR') {
            const st = ev.object as unknown as Status;
            throw new StatusError(st.code ?? 500, st.reason ?? '', st.message ?? 'watch error', st.details);
          }
          yield ev;
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    } finally {
      body.destroy();
    }
  }

  /**
   * A long-running GET (a watch, a followed log): its body as it arrives, for as long as the
   * server sends it; a refusal surfaces as a StatusError.
   */
  async stream(path: string, query: RequestOptions['query'], signal: AbortSignal): Promise<Readable> {
    // The per-request timeout is for short requests: a quiet stream is not a stalled one.
    const res = await this.send429Aware('GET', buildPath(path, query), { signal, timeoutMs: 0 });
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const c of res.body) chunks.push(c as Buffer);
      throw statusFrom(res.statusCode, Buffer.concat(chunks).toString('utf8'));
    }
    return res.body;
  }
}

async function sendH2(sessions: H2Sessions, out: Outgoing): Promise<Answer> {
  const headers: Record<string, string | string[]> = { [h2.HTTP2_HEADER_METHOD]: out.method, [h2.HTTP2_HEADER_PATH]: out.url.pathname + out.url.search };
  for (const [k, v] of Object.entries(out.headers)) headers[k.toLowerCase()] = v;
  const timeoutMs = out.timeoutMs;
  let stream;
  try {
    // The request's timeout starts once it has its stream: as an HTTP/1.1 request's does not cover
    // its wait for a socket, this one's does not cover the wait for a free slot (the sessions bound
    // the wait for a connection themselves).
    stream = await sessions.open(out.server, headers, { hasBody: out.body !== undefined, longRunning: timeoutMs === 0, urgent: out.urgent, signal: out.signal });
  } catch (e) {
    out.failed();
    throw e;
  }
  const opened = stream;
  return new Promise((resolve, reject) => {
    let answered = false;
    opened.once('response', (h) => {
      answered = true;
      const code = Number(h[h2.HTTP2_HEADER_STATUS]);
      out.answered(code);
      resolve({ statusCode: code, headers: h, body: opened });
    });
    const unanswered = (e: Error) => {
      if (answered) return;
      answered = true;
      out.failed();
      reject(e);
    };
    opened.once('error', unanswered);
    // A connection that goes away closes its streams without an error.
    opened.once('close', () => unanswered(new Error(`the stream was closed before an answer (HTTP/2 code ${opened.rstCode ?? 'none'})`)));
    if (timeoutMs) opened.setTimeout(timeoutMs, () => opened.destroy(new RequestTimeoutError(timeoutMs)));
    if (out.body !== undefined) opened.end(out.body);
  });
}
