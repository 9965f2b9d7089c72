// `skiff dashboard`: a local web server that shows the cluster as the user's own kubeconfig sees it
// (as `kubectl proxy` and Headlamp's desktop mode act with the user's credentials), and does what
// its buttons ask with those credentials. The page is static (bundled at build time, ./ui/); the
// live view comes as Server-Sent Events, one snapshot and then patches.
//
// It listens on loopback by default. Anything that can reach it acts as the kubeconfig's user, so
// it answers only requests whose Host names it (a page from elsewhere cannot rebind a name to it)
// and changes nothing unless the request carries the page's own header (a form or a script of
// another site cannot send one without a CORS preflight, which is never granted).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { setMaxListeners } from 'node:events';
import { fileURLToPath } from 'node:url';
import { EndpointDiscovery } from '../client/endpoint-discovery.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/log.js';
import { parseAction, runAction } from './actions.js';
import { ClusterView } from './cluster-view.js';
import { DASHBOARD_HEADER, type ViewMessage } from './view.js';

export interface DashboardOptions {
  client: ApiClient;
  clock: Clock;
  log: Logger;
  host: string;
  port: number;
  /** How often pending changes go out at most. Default 200 ms. */
  flushMs?: number;
}

const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** Where the build put the page (dist/src/dashboard/ui). */
const ASSET_DIR = fileURLToPath(new URL('./ui/', import.meta.url));

const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** How long a page's first view waits for the watches to list. */
const FIRST_VIEW_WAIT_MS = 5_000;

/** A page's stream: dropped (it reconnects and gets a snapshot) if it stops reading. */
const MAX_BUFFERED_BYTES = 16 * 2 ** 20;

export class Dashboard {
  private readonly view: ClusterView;
  private readonly abort = new AbortController();
  private readonly streams = new Set<ServerResponse>();
  private server?: Server;
  private flushTimer?: ReturnType<typeof setTimeout>;
  private lastFlush = 0;
  private user = 'unknown';
  private ready?: Promise<void>;
  private port = 0;

  constructor(private readonly o: DashboardOptions) {
    // Every watch and the member probes listen on this one signal.
    setMaxListeners(0, this.abort.signal);
    this.view = new ClusterView({ client: o.client, clock: o.clock, log: o.log, changed: () => this.scheduleFlush() });
  }

  get url(): string {
    // Listening on every address: the URL names loopback, which is one of them.
    const host = this.o.host === '0.0.0.0' ? '127.0.0.1' : this.o.host === '::' ? '::1' : this.o.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.port}/`;
  }

  /** Starts watching and listens; resolves with the URL once it listens. */
  async start(): Promise<string> {
    const signal = this.abort.signal;
    const discovery = new EndpointDiscovery({ client: this.o.client, configured: [...this.o.client.serverList], clock: this.o.clock, log: this.o.log });
    void discovery.refresh(signal).then((ok) => discovery.run(signal, ok));
    // A page's first view says who the dashboard acts as: that answer is part of being ready.
    this.ready = Promise.all([this.view.start(signal), this.whoAmI()]).then(() => {});
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    const ping = setInterval(() => {
      for (const s of this.streams) s.write(': ping\n\n');
    }, 15_000);
    ping.unref();
    signal.addEventListener('abort', () => clearInterval(ping));
    return this.url;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.flushTimer);
    for (const s of this.streams) s.end();
    this.streams.clear();
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise((r) => this.server!.close(r));
    }
    this.o.client.close();
  }

  private async whoAmI(): Promise<void> {
    try {
      const review = await this.o.client.create<{ status?: { userInfo?: { username?: string } } }>('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      this.user = review.status?.userInfo?.username ?? 'unknown';
    } catch (e) {
      this.o.log.debug({ err: errorText(e) }, 'cannot tell who the kubeconfig is');
    }
  }

  // ---- live view ----

  /**
   * A change after a quiet spell goes out at once (after the events already queued with it); in a
   * busy spell, at most one patch per flushMs carries everything that changed.
   */
  private scheduleFlush(): void {
    if (this.flushTimer) return;
    const wait = Math.max(0, this.lastFlush + (this.o.flushMs ?? 200) - this.o.clock.now());
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flush();
    }, wait);
  }

  private flush(): void {
    this.lastFlush = this.o.clock.now();
    const patch = this.view.takePatch();
    if (patch) for (const s of this.streams) this.send(s, patch);
  }

  private send(res: ServerResponse, m: ViewMessage): void {
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      this.o.log.info('a page stopped reading its stream; dropping it (it reconnects)');
      this.streams.delete(res);
      res.destroy();
      return;
    }
    res.write(`event: ${m.type}\ndata: ${JSON.stringify(m)}\n\n`);
  }

  private async stream(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // An API server that does not answer yet holds the first page only so long: it starts with
    // what there is, and the rest arrives as patches.
    let waited: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.ready, new Promise((r) => (waited = setTimeout(r, FIRST_VIEW_WAIT_MS)))]);
    clearTimeout(waited);
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-store', Connection: 'keep-alive' });
    // What is pending goes to the pages already open; this one starts from the result.
    this.flush();
    res.write('retry: 1000\n\n');
    this.send(res, this.view.snapshot(this.o.client.server, this.user));
    this.streams.add(res);
    req.on('close', () => this.streams.delete(res));
  }

  // ---- requests ----

  /** Only requests that name this server: a DNS name rebound to loopback does not. */
  private hostAllowed(req: IncomingMessage): boolean {
    const host = req.headers.host ?? '';
    const allowed = new Set([`127.0.0.1:${this.port}`, `localhost:${this.port}`, `[::1]:${this.port}`]);
    const listen = this.o.host.includes(':') ? `[${this.o.host}]` : this.o.host;
    if (listen !== '0.0.0.0' && listen !== '[::]') allowed.add(`${listen}:${this.port}`);
    // Listening on every address is a choice to be reached by any name.
    return allowed.has(host) || listen === '0.0.0.0' || listen === '[::]';
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://dashboard');
      if (!this.hostAllowed(req)) return this.json(res, 403, { ok: false, message: `this dashboard answers only to the names it listens on, not ${JSON.stringify(req.headers.host ?? '')}` });
      const asset = ASSETS[url.pathname];
      if (req.method === 'GET' && asset) return this.asset(res, asset);
      if (req.method === 'GET' && url.pathname === '/healthz') return this.json(res, 200, { ok: true });
      if (req.method === 'GET' && url.pathname === '/stream') return await this.stream(req, res);
      if (url.pathname.startsWith('/api/') && req.headers[DASHBOARD_HEADER] !== '1') {
        return this.json(res, 403, { ok: false, message: `requests to the dashboard's API carry the ${DASHBOARD_HEADER} header` });
      }
      const podsOf = /^\/api\/nodes\/([^/]+)\/pods$/.exec(url.pathname);
      if (req.method === 'GET' && podsOf) return this.json(res, 200, this.view.podsOn(decodeURIComponent(podsOf[1]!)));
      const namespace = /^\/api\/namespaces\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && namespace) return this.json(res, 200, await this.view.namespaceDetail(decodeURIComponent(namespace[1]!)));
      if (req.method === 'GET' && url.pathname === '/api/logs') return await this.logs(url, req, res);
      if (req.method === 'POST' && url.pathname === '/api/actions') return await this.action(req, res);
      this.json(res, 404, { ok: false, message: `no ${req.method} ${url.pathname} here` });
    } catch (e) {
      this.o.log.warn({ err: errorText(e), url: req.url }, 'dashboard request failed');
      if (!res.headersSent) this.json(res, 500, { ok: false, message: errorText(e) });
      else res.destroy();
    }
  }

  private asset(res: ServerResponse, a: { file: string; type: string }): void {
    const path = ASSET_DIR + a.file;
    if (!existsSync(path)) return this.json(res, 500, { ok: false, message: `the page is not built (${path} is missing): run npm run build` });
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': a.type, 'Cache-Control': 'no-cache' });
    res.end(readFileSync(path));
  }

  private json(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { ...SECURITY_HEADERS, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  }

  private async action(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return this.json(res, 415, { ok: false, message: 'actions are sent as application/json' });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > 64 * 1024) return this.json(res, 413, { ok: false, message: 'an action is a small JSON object' });
      chunks.push(c as Buffer);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (e) {
      return this.json(res, 400, { ok: false, message: `the body is not JSON: ${errorText(e)}` });
    }
    const a = parseAction(body);
    if (typeof a === 'string') return this.json(res, 400, { ok: false, message: a });
    const result = await runAction(a, { client: this.o.client, podsOn: (node) => this.view.podsBoundTo(node) });
    this.o.log.info({ action: a.action, ok: result.ok, ...(result.ok ? {} : { err: result.message }) }, 'action');
    this.json(res, result.ok ? 200 : (result.code ?? 500), result);
  }

  /** A container's log, as `kubectl logs [-f]` reads it, streamed as text. */
  private async logs(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ns = url.searchParams.get('namespace') ?? '';
    const pod = url.searchParams.get('pod') ?? '';
    if (!ns || !pod) return this.json(res, 400, { ok: false, message: 'logs need namespace and pod' });
    const query: Record<string, string> = { tailLines: url.searchParams.get('tailLines') ?? '500' };
    const container = url.searchParams.get('container');
    if (container) query.container = container;
    if (url.searchParams.get('follow') === '1') query.follow = 'true';
    const ac = new AbortController();
    req.on('close', () => ac.abort());
    let body;
    try {
      body = await this.o.client.stream(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log`, query, ac.signal);
    } catch (e) {
      const code = (e as { status?: { code?: number } }).status?.code ?? 502;
      return this.json(res, code, { ok: false, message: errorText(e), code });
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    body.on('error', () => res.end());
    body.pipe(res);
    res.on('close', () => body.destroy());
  }
}
