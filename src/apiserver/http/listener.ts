// The API server's listener: TLS with HTTP/2 and HTTP/1.1 on one port, chosen by ALPN, as
// kube-apiserver serves them. kubectl and client-go speak HTTP/2 and multiplex every request of a
// process over one connection; agents, @kubernetes/client-node and curl speak HTTP/1.1.
//
// Handlers see both as IncomingMessage/ServerResponse. Node's HTTP/2 compatibility objects offer
// the same reading, header and body calls; the few places that differ ask isHttp2() (watch
// framing) or use tlsSocketOf() (client certificates).
import http2, { type Http2ServerRequest, type Http2Session } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';

export interface ListenerOptions {
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string; caPem: string };
  /** Concurrent streams a client may open on one HTTP/2 connection (upstream --http2-max-streams-per-connection). */
  maxStreamsPerConnection?: number;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** True for a request that arrived over HTTP/2. */
export function isHttp2(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 2;
}

/**
 * The TLS connection a request came on. For HTTP/2 this is the session's socket, the same object
 * for every stream of the connection, so per-connection work (reading the client certificate) is
 * done once.
 */
export function tlsSocketOf(req: IncomingMessage): TLSSocket {
  const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
  return (stream ? stream.session!.socket : req.socket) as TLSSocket;
}

export class ApiListener {
  private readonly server: http2.Http2SecureServer;
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<Http2Session>();

  constructor(private readonly opts: ListenerOptions, onRequest: RequestListener) {
    this.server = http2.createSecureServer(
      {
        key: opts.tls.keyPem,
        cert: opts.tls.certPem,
        ca: opts.tls.caPem,
        requestCert: true,
        rejectUnauthorized: false,
        allowHTTP1: true,
        settings: { maxConcurrentStreams: opts.maxStreamsPerConnection ?? 1000 },
        // Node refuses new streams on a session holding more than this in buffers (10 MB by
        // default); a client-go process multiplexes all its watches over one session.
        maxSessionMemory: 256,
      },
      onRequest as unknown as (req: Http2ServerRequest, res: http2.Http2ServerResponse) => void,
    );
    // The HTTP/1.1 side reads these from the server object as an https.Server would. Watches and
    // log streams run long, and upstream bounds them itself: no request timeout.
    Object.assign(this.server, { keepAliveTimeout: 65_000, headersTimeout: 70_000, requestTimeout: 0 });
    this.server.setTimeout(0);
    this.server.on('secureConnection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.on('session', (s: Http2Session) => {
      this.sessions.add(s);
      s.once('close', () => this.sessions.delete(s));
    });
  }

  /** Listens; resolves with the bound port. */
  async listen(): Promise<number> {
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection, streaming or idle. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sessions) s.destroy();
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
