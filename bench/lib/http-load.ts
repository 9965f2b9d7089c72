// A lean HTTP/1.1 load generator on raw TLS sockets: one keep-alive connection per client, one
// request in flight on it, requests written as prepared bytes and responses read just far enough to
// know their status and body. A Go client (client-go, wrk, hey) costs the machine a few microseconds
// per request; Node's https.request costs ~150 µs, which on a 2-core machine takes CPU from the server
// being measured. This client keeps the measurement about the server.
import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

export interface LeanResponse {
  status: number;
  body: Buffer;
}

interface Pending {
  resolve(r: LeanResponse): void;
  reject(e: Error): void;
}

const HEADER_END = Buffer.from('\r\n\r\n');

interface Target {
  host: string;
  port: number;
  hostHeader: string;
  tls: { ca?: string; cert?: string; key?: string; servername?: string };
}

function connectTls(t: Target): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: t.host, port: t.port, ...t.tls });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * One keep-alive HTTPS connection; request() must not be called again before it settles. A
 * connection the server closed is opened again by the next request.
 */
export class LeanConnection {
  private socket: TLSSocket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;

  private constructor(private readonly target: Target) {}

  /** Connects with the kubeconfig's credentials to its server, or to `server` (an https:// URL). */
  static async open(kubeconfigPath: string, server?: string): Promise<LeanConnection> {
    const kc = parseKubeconfig(readFileSync(kubeconfigPath, 'utf8'), (p) => readFileSync(p, 'utf8'));
    const url = new URL(server ?? kc.server);
    const c = new LeanConnection({
      host: url.hostname,
      port: Number(url.port || 443),
      hostHeader: url.host,
      tls: {
        ...(kc.caPem ? { ca: kc.caPem } : {}),
        ...(kc.clientCertPem ? { cert: kc.clientCertPem } : {}),
        ...(kc.clientKeyPem ? { key: kc.clientKeyPem } : {}),
        ...(/^[\d.]+$/.test(url.hostname) ? {} : { servername: url.hostname }),
      },
    });
    await c.connect();
    return c;
  }

  private async connect(): Promise<TLSSocket> {
    const socket = await connectTls(this.target);
    socket.setNoDelay(true);
    this.buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => this.onData(d));
    const lost = (e: Error) => {
      if (this.socket === socket) this.socket = undefined;
      this.settle(undefined, e);
    };
    socket.on('error', lost);
    socket.on('close', () => lost(new Error('connection closed')));
    this.socket = socket;
    return socket;
  }

  /** Sends method path with a JSON body (or none) and resolves with the status and the body. */
  async request(method: string, path: string, body?: string): Promise<LeanResponse> {
    if (this.pending) throw new Error('a request is already in flight on this connection');
    const socket = this.socket ?? (await this.connect());
    const head =
      `${method} ${path} HTTP/1.1\r\nHost: ${this.target.hostHeader}\r\nAccept: application/json\r\nUser-Agent: skiff-bench\r\n` +
      (body === undefined ? '\r\n' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      socket.write(body === undefined ? head : head + body);
    });
  }

  close(): void {
    const s = this.socket;
    this.socket = undefined;
    s?.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const end = this.buf.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buf.subarray(0, end).toString('latin1');
    const status = Number(head.slice(9, 12));
    const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!cl) {
      // The API server answers these requests with Content-Length; anything else is a bench bug.
      this.settle(undefined, new Error(`response without Content-Length: ${head.split('\r\n')[0]}`));
      this.close();
      return;
    }
    const total = end + 4 + Number(cl[1]);
    if (this.buf.length < total) return;
    const body = this.buf.subarray(end + 4, total);
    this.buf = this.buf.length > total ? this.buf.subarray(total) : Buffer.alloc(0);
    this.settle({ status, body });
  }

  private settle(r: LeanResponse | undefined, e?: Error): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    if (r) p.resolve(r);
    else p.reject(e ?? new Error('connection lost'));
  }
}

/** Throws with the server's message unless status is 2xx. */
export function expectOk(r: LeanResponse): LeanResponse {
  if (r.status >= 200 && r.status < 300) return r;
  let msg = r.body.toString('utf8', 0, Math.min(r.body.length, 300));
  try {
    msg = (JSON.parse(r.body.toString('utf8')) as { message?: string }).message ?? msg;
  } catch {
    /* not JSON */
  }
  throw new Error(`HTTP ${r.status}: ${msg}`);
}
