// The agent's kubelet-style HTTPS endpoint, which the API server proxies to: container logs
// (GET /containerLogs/<namespace>/<pod>/<container>?follow=&tailLines=&previous=&limitBytes=
// &sinceSeconds=), the streams kubectl opens into pods (upgrades to /exec/<ns>/<pod>/<container>,
// /attach/..., /portForward/<ns>/<pod>, relayed to the runtime's streaming server), /metrics and
// /healthz, and the resource usage the runtime reads: the summary API (/stats/summary) and the
// resource metrics metrics-server scrapes (/metrics/resource). Clients must present a certificate signed by the cluster CA (the API server's kubelet
// client, or an admin's).
import { errorText } from '../util/error-text.js';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import type { Logger } from '../util/log.js';
import { queryBool } from '../api/query-params.js';
import type { PodWorker } from './pod-worker.js';
import { CriLogDecoder } from './cri-log.js';
import { TimedLogDecoder } from './log-times.js';
import type { RuntimeName, StreamRequest } from './runtimes/runtime.js';
import type { StatsReading } from './stats-provider.js';
import { nodeSubresource, requestVerb, type NodeSubresource, type PortCaller } from './port-authorizer.js';
import { summaryOf } from '../resource-metrics/summary.js';
import { RESOURCE_METRICS_CONTENT_TYPE, resourceMetricsText } from '../resource-metrics/resource-text.js';
import { asRequest, relayUpgrade, upgradeHeaders, upgradeOf, UpgradeRefused } from '../util/upgrade.js';

export interface LogServerOptions {
  host: string;
  port: number;
  certPem: string;
  keyPem: string;
  /** Client certificates must chain to this CA. */
  caPem: string;
  log: Logger;
  lookup(namespace: string, pod: string): PodWorker | undefined;
  /** How often a followed log is checked for new output. */
  pollMs?: number;
  /** The Prometheus text served at /metrics. */
  metrics?(): Promise<{ contentType: string; body: string }>;
  /** The node's and its containers' resource usage (/stats/summary, /metrics/resource). */
  stats?(): Promise<StatsReading>;
  /** Whether another caller with a cluster CA certificate may (a SubjectAccessReview); without it, only the API server and system:masters. */
  authorize?(caller: PortCaller, verb: string, subresource: NodeSubresource): Promise<boolean>;
  /** The runtime, for saying why it cannot exec when it cannot. */
  runtime?: RuntimeName;
  /** Where the runtime serves an exec, attach or port-forward; absent when it has no streaming server. */
  streamUrl?(req: StreamRequest): Promise<string>;
}

const ALLOWED_CN = 'skiff-apiserver-kubelet-client';

function send(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Byte offset where the last `lines` lines of the file start. */
export function tailOffset(path: string, lines: number): number {
  const size = statSync(path).size;
  if (lines <= 0) return size;
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let pos = size;
    let seen = 0;
    // A trailing newline ends the last line; it does not start another.
    let skipTrailing = true;
    while (pos > 0) {
      const len = Math.min(chunk.length, pos);
      pos -= len;
      readSync(fd, chunk, 0, len, pos);
      for (let i = len - 1; i >= 0; i--) {
        if (chunk[i] !== 0x0a) {
          skipTrailing = false;
          continue;
        }
        if (skipTrailing) {
          skipTrailing = false;
          continue;
        }
        if (++seen === lines) return pos + i + 1;
      }
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * Why a runtime without a streaming server cannot exec, attach or forward, in one line. `kubectl cp`
 * is an exec of tar, so it is named as what the user typed, with the way that works instead.
 */
export function noStreamsMessage(runtime: RuntimeName, kind: StreamRequest['kind'], command: string[]): string {
  const what = runtime === 'simulated' ? 'simulated containers, which run no process' : "host processes sharing the node's files and network";
  if (kind === 'exec' && /(^|\/)tar$/.test(command[0] ?? '')) {
    return `kubectl cp needs a container to run tar in, and the ${runtime} runtime has none (its containers are ${what}): ${runtime === 'process' ? "copy the files on the node itself (a container's files are the host's), or " : ''}run the node's agent with --runtime containerd`;
  }
  const verb = kind === 'portforward' ? 'forward ports into' : `${kind} to`;
  return `the ${runtime} runtime has no containers to ${verb} (its containers are ${what}): run the node's agent with --runtime containerd`;
}

export class LogServer {
  private server?: https.Server;
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly o: LogServerOptions) {}

  async start(): Promise<number> {
    const server = https.createServer(
      { cert: this.o.certPem, key: this.o.keyPem, ca: this.o.caPem, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const failed = (e: unknown): void => {
          if (!res.headersSent) send(res, 500, `internal error: ${errorText(e)}`);
          else res.destroy();
        };
        this.admitted(req, res).then((ok) => {
          if (!ok) return;
          try {
            this.handle(req, res);
          } catch (e) {
            failed(e);
          }
        }, failed);
      },
    );
    server.on('upgrade', (req: IncomingMessage, socket: import('node:net').Socket, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      const res = asRequest(req, socket, head);
      this.handleUpgrade(req, res).catch((e: unknown) => {
        if (!res.headersSent && !socket.destroyed) send(res, 500, `internal error: ${errorText(e)}`);
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : this.o.port;
  }

  async stop(): Promise<void> {
    for (const r of this.open) r.destroy();
    this.open.clear();
    const s = this.server;
    if (!s) return;
    s.closeAllConnections?.();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** Whether the caller may use this endpoint; when not, it has been answered. */
  private async admitted(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const socket = req.socket as TLSSocket;
    if (!socket.authorized) {
      send(res, 401, 'Unauthorized');
      return false;
    }
    const subject = socket.getPeerCertificate()?.subject as Record<string, string | string[]> | undefined;
    const cn = typeof subject?.CN === 'string' ? subject.CN : '';
    const orgs = subject?.O === undefined ? [] : Array.isArray(subject.O) ? subject.O : [subject.O];
    if (cn === ALLOWED_CN || orgs.includes('system:masters')) return true;
    const verb = requestVerb(req.method);
    const subresource = nodeSubresource(new URL(req.url ?? '/', 'https://agent').pathname);
    if (this.o.authorize && (await this.o.authorize({ user: cn, groups: [...orgs, 'system:authenticated'] }, verb, subresource))) return true;
    send(res, 403, `Forbidden (user=${cn}, verb=${verb}, resource=nodes, subresource=${subresource})`);
    return false;
  }

  /** exec, attach, port-forward: the runtime makes a one-time URL; the client's upgrade is relayed to it. */
  private async handleUpgrade(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(await this.admitted(req, res))) return;
    const url = new URL(req.url ?? '/', 'https://agent');
    const m = /^\/(exec|attach|portForward)\/([^/]+)\/([^/]+)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!m) return send(res, 404, '404 page not found');
    const kind = m[1] === 'portForward' ? 'portforward' : (m[1] as 'exec' | 'attach');
    const [ns, podName] = [decodeURIComponent(m[2]!), decodeURIComponent(m[3]!)];
    const w = this.o.lookup(ns, podName);
    if (!w) return send(res, 404, `pod "${podName}" in namespace "${ns}" not found on this node`);
    if (!this.o.streamUrl) return send(res, 400, noStreamsMessage(this.o.runtime ?? 'process', kind, url.searchParams.getAll('command')));
    const q = url.searchParams;
    let request: StreamRequest;
    if (kind === 'portforward') {
      const ports = q.getAll('port').map(Number);
      if (ports.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) return send(res, 400, `invalid port in ${JSON.stringify(q.getAll('port'))}`);
      request = { kind, podUid: w.uid, ports };
    } else {
      const container = m[4] === undefined ? '' : decodeURIComponent(m[4]);
      if (!w.logs(container).known) return send(res, 404, `container "${container}" not found in pod "${podName}"`);
      const instanceId = w.runningInstance(container);
      if (!instanceId) return send(res, 400, `container "${container}" in pod "${podName}" is not running`);
      const streams = { stdin: q.get('input') === '1', stdout: q.get('output') === '1', stderr: q.get('error') === '1', tty: q.get('tty') === '1' };
      request = kind === 'exec' ? { kind, instanceId, command: q.getAll('command'), streams } : { kind, instanceId, streams };
    }
    let target: string;
    try {
      target = await this.o.streamUrl(request);
    } catch (e) {
      return send(res, 400, `cannot ${kind === 'portforward' ? 'forward ports to' : kind} ${ns}/${podName}: ${errorText(e)}`);
    }
    const up = upgradeOf(req)!;
    try {
      await relayUpgrade(up, { url: target, method: req.method ?? 'GET', headers: upgradeHeaders(req) });
    } catch (e) {
      if (e instanceof UpgradeRefused) return send(res, e.status, e.body);
      return send(res, 502, `the container runtime's streaming server: ${errorText(e)}`);
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://agent');
    if (url.pathname === '/healthz') return send(res, 200, 'ok');
    if (url.pathname === '/metrics' && this.o.metrics) {
      void this.o.metrics().then(
        (m) => {
          res.writeHead(200, { 'Content-Type': m.contentType, 'Content-Length': Buffer.byteLength(m.body) });
          res.end(m.body);
        },
        (e: unknown) => send(res, 500, `metrics: ${errorText(e)}`),
      );
      return;
    }
    if ((url.pathname === '/stats/summary' || url.pathname === '/metrics/resource') && this.o.stats) {
      if (req.method !== 'GET') return send(res, 405, 'method not allowed');
      const summary = url.pathname === '/stats/summary';
      void this.o.stats().then(
        (r) => {
          // The kubelet answers a summary it cannot make whole with a 500; the resource metrics say so in resource_scrape_error.
          if (summary && r.error !== undefined) return send(res, 500, `Internal Error: failed to get container stats: ${r.error}`);
          const body = summary ? JSON.stringify(summaryOf(r.report)) : resourceMetricsText(r.report, r.error !== undefined);
          res.writeHead(200, { 'Content-Type': summary ? 'application/json' : RESOURCE_METRICS_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body) });
          res.end(body);
        },
        (e: unknown) => send(res, 500, `stats: ${errorText(e)}`),
      );
      return;
    }
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    if (!m) return send(res, 404, `404 page not found`);
    if (req.method !== 'GET') return send(res, 405, 'method not allowed');
    const [ns, podName, container] = [m[1]!, m[2]!, m[3]!].map(decodeURIComponent) as [string, string, string];
    const w = this.o.lookup(ns, podName);
    if (!w) return send(res, 404, `pod "${podName}" in namespace "${ns}" not found on this node`);
    const info = w.logs(container);
    if (!info.known) return send(res, 404, `container "${container}" not found in pod "${podName}"`);
    const q = url.searchParams;
    const previous = queryBool(q, 'previous');
    let path: string;
    let follow = queryBool(q, 'follow');
    if (previous) {
      if (!info.previous || !existsSync(info.previous)) return send(res, 400, `previous terminated container "${container}" in pod "${podName}" not found`);
      path = info.previous;
      follow = false;
    } else {
      if (!info.current) return send(res, 400, `container "${container}" in pod "${podName}" is waiting to start: ${info.waiting ?? 'ContainerCreating'}`);
      path = info.current.path;
      follow = follow && info.current.running;
    }
    const tail = q.get('tailLines');
    const limit = q.get('limitBytes');
    const sinceSeconds = q.get('sinceSeconds');
    let limitBytes = limit !== null && /^\d+$/.test(limit) ? Number(limit) : Infinity;
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache' });
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    const sinceTime = q.get('sinceTime');
    const sinceMs =
      sinceSeconds !== null && /^\d+$/.test(sinceSeconds) ? Date.now() - Number(sinceSeconds) * 1000 : sinceTime !== null && !Number.isNaN(Date.parse(sinceTime)) ? Date.parse(sinceTime) : undefined;
    // CRI logs carry a time per line, and the process runtime's logs have marks of when they grew
    // (log-times.ts): --timestamps and --since are per line. Other raw logs have none.
    const timestamps = queryBool(q, 'timestamps');
    let offset = 0;
    if (existsSync(path)) {
      const st = statSync(path);
      // Without per-line times, a since can only drop a whole file last written before it.
      if (!info.format && sinceMs !== undefined && st.mtimeMs < sinceMs) offset = st.size;
      else if (tail !== null && /^-?\d+$/.test(tail) && Number(tail) >= 0) offset = tailOffset(path, Number(tail));
    }
    const since = sinceMs !== undefined ? { sinceMs } : {};
    const decoder =
      info.format === 'cri'
        ? new CriLogDecoder({ timestamps, ...since })
        : info.format === 'marked' && (timestamps || sinceMs !== undefined)
          ? new TimedLogDecoder(path, { offset, timestamps, ...since, now: Date.now })
          : undefined;
    const write = (chunk: Buffer): boolean => {
      let out = decoder ? decoder.push(chunk) : chunk;
      if (out.length > limitBytes) out = out.subarray(0, limitBytes);
      limitBytes -= out.length;
      return out.length === 0 || res.write(out);
    };
    const pump = (): boolean => {
      if (!existsSync(path)) return true;
      const size = statSync(path).size;
      // Rotated (copied aside and emptied): what the container writes now starts at 0.
      if (size < offset) offset = 0;
      if (size <= offset) return true;
      const fd = openSync(path, 'r');
      try {
        const buf = Buffer.alloc(64 * 1024);
        while (offset < size && limitBytes > 0) {
          // Raw bytes are output bytes, so a read stops at the limit; CRI records shrink when decoded.
          const n = readSync(fd, buf, 0, Math.min(buf.length, size - offset, decoder ? buf.length : limitBytes), offset);
          if (n <= 0) break;
          offset += n;
          if (!write(buf.subarray(0, n))) {
            // Slow reader: continue on the next poll.
            break;
          }
        }
      } finally {
        closeSync(fd);
      }
      return limitBytes > 0;
    };
    const more = pump();
    // A last line without its newline, from a log that ends here.
    const finish = (): void => {
      if (decoder instanceof TimedLogDecoder && limitBytes > 0) write(decoder.end());
      res.end();
    };
    if (!follow || !more) return finish();
    const timer = setInterval(() => {
      if (res.destroyed) return clearInterval(timer);
      const canMore = pump();
      const now = w.logs(container).current;
      const stillRunning = now?.path === path && now.running;
      if (!canMore || !stillRunning) {
        if (canMore) pump();
        clearInterval(timer);
        finish();
      }
    }, this.o.pollMs ?? 250);
    res.on('close', () => clearInterval(timer));
  }
}
