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
import { asRequest } from '../../util/upgrade.js';

export interface ListenerOptions {
  host: string;
  port: number;
  tls: { certPem: string; keyPem: string; caPem: string };
  /** Concurrent streams a client may open on one HTTP/2 connection (upstream --http2-max-streams-per-connection). */
  maxStreamsPerConnection?: number;
  /** An HTTP/2 connection without open streams this long is closed (upstream: 90 s). */
  idleConnectionMs?: number;
  /**
   * How long a client may take over its TLS handshake, and then over a request's headers, before
   * the connection is cut (upstream's ReadHeaderTimeout, 32 s, which bounds Go's handshake too):
   * a slowloris client holds its connection this long at most.
   */
  readHeaderTimeoutMs?: number;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Upstream's HTTP/2 IdleTimeout: a connection without open streams this long is closed. */
const IDLE_SESSION_MS = 90_000;
/** Upstream's ReadHeaderTimeout. */
const READ_HEADER_TIMEOUT_MS = 32_000;
/** TCP keepalive probes find peers that vanished (sleep, NAT drop) under a long-quiet watch. */
const TCP_KEEPALIVE_MS = 30_000;

/** The HTTP/2 stream a request came on; undefined for HTTP/1.1. */
function streamOf(req: IncomingMessage): { closed: boolean; destroyed: boolean } | undefined {
  return (req as unknown as { stream?: { closed: boolean; destroyed: boolean } }).stream;
}

function streamClosed(req: IncomingMessage): boolean {
  const stream = streamOf(req);
  return stream !== undefined && (stream.closed || stream.destroyed);
}

/**
 * True when a request's body ended because the client gave up: Node's HTTP/2 compat request ends
 * like a complete one after a reset, and sets `aborted` only if the reset was seen before the
 * stream closed, so the stream is asked too.
 */
export function streamClosedEarly(req: IncomingMessage): boolean {
  return req.aborted || streamClosed(req);
}

/**
 * True once the client has gone. An HTTP/2 compat response has no `destroyed`, and its request is
 * not marked destroyed when the stream closes: the stream says so.
 */
export function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  return req.destroyed || res.destroyed || streamClosed(req);
}

/**
 * Cuts a response that cannot be finished (it failed after its head was sent): a client must see
 * a broken answer, not a short one that ends cleanly. HTTP/2: the stream is reset.
 */
export function abortResponse(req: IncomingMessage, res: ServerResponse): void {
  const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
  if (stream) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  else res.destroy();
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
        handshakeTimeout: opts.readHeaderTimeoutMs ?? READ_HEADER_TIMEOUT_MS,
      },
      onRequest as unknown as (req: Http2ServerRequest, res: http2.Http2ServerResponse) => void,
    );
    // The HTTP/1.1 side reads these from the server object as an https.Server would. Watches and
    // log streams run long, and upstream bounds them itself: no request timeout. The header
    // timeout runs from a request's first byte, so it never cuts an idle keep-alive connection.
    // (An explicit connectionsCheckingInterval: some Node 20 releases left it unset and checked on
    // every tick; a quarter of the timeout enforces it within 25 %.)
    const headersTimeout = opts.readHeaderTimeoutMs ?? READ_HEADER_TIMEOUT_MS;
    Object.assign(this.server, { keepAliveTimeout: 65_000, headersTimeout, requestTimeout: 0, connectionsCheckingInterval: Math.max(50, Math.floor(headersTimeout / 4)) });
    // Streams run as long as they need (watches, logs); idle connections are closed below.
    this.server.setTimeout(0);
    // Raw TCP connections, so close() also drops those still in their TLS handshake.
    this.server.on('connection', (s: Socket) => {
      // As an https.Server does (noDelay): a watch event or response goes out at once, not
      // after Nagle's wait for an acknowledgement.
      s.setNoDelay(true);
      s.setKeepAlive(true, TCP_KEEPALIVE_MS);
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.on('session', (s: Http2Session) => this.track(s));
    // exec, attach and port-forward (HTTP/1.1 upgrades) take the same path as every request:
    // authentication, flow control, authorization; their handler takes the connection over.
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      onRequest(req, asRequest(req, socket, head));
    });
  }

  /** Closes a session once it has had no open stream for IDLE_SESSION_MS. */
  private track(session: Http2Session): void {
    this.sessions.add(session);
    let open = 0;
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      idle = setTimeout(() => session.close(), this.opts.idleConnectionMs ?? IDLE_SESSION_MS);
      idle.unref();
    };
    session.on('stream', (stream) => {
      open++;
      clearTimeout(idle);
      stream.once('close', () => {
        if (--open === 0 && !session.closed) arm();
      });
    });
    session.once('close', () => {
      clearTimeout(idle);
      this.sessions.delete(session);
    });
    arm();
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
