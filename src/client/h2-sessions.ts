// One HTTP/2 connection per API server, as client-go keeps: every request and watch of a process
// is a stream on it. A session that fails, is closed or is told GOAWAY is replaced on the next
// request. Requests beyond `maxRequests` at once (and streams beyond what the server allows, its
// SETTINGS_MAX_CONCURRENT_STREAMS) wait their turn here, as HTTP/1.1 requests wait for one of an
// agent's sockets: a server admitting a thousand requests at once answers each of them late, and
// requests that time out and are sent again only add to its load. Watches and other long-running
// streams are not requests waiting for an answer: they count only against the server's limit.
// Urgent requests (heartbeats) wait in a lane of their own, served before the others.
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import tls, { type SecureContextOptions } from 'node:tls';
import { isIP } from 'node:net';

const STREAM_WINDOW = 4 * 2 ** 20;
const CONNECTION_WINDOW = 64 * 2 ** 20;

interface Waiter {
  longRunning: boolean;
  go(): void;
}

interface Pooled {
  session: ClientHttp2Session;
  connected: Promise<ClientHttp2Session>;
  /** Streams open or reserved, and of them requests waiting for their answer (not watches). */
  active: number;
  requests: number;
  /** Long-running streams, urgent requests and other requests waiting for a slot, each in arrival order. */
  waitingLong: Waiter[];
  waitingUrgent: Waiter[];
  waitingRequests: Waiter[];
  /** No new streams: the session failed, closed or was told GOAWAY. */
  retired: boolean;
  streams: Set<ClientHttp2Stream>;
  /** Takes the session out of use; `cut` fails the streams still open on it. */
  retire(cut: Error | undefined): void;
}

export class H2Sessions {
  private readonly pool = new Map<string, Pooled>();
  private closed = false;

  private readonly maxRequests: number;
  private readonly connectTimeoutMs: number;

  constructor(
    private readonly tls: Pick<SecureContextOptions, 'ca' | 'cert' | 'key'>,
    /** `connectTimeoutMs`: a session not set up by then fails (a stopped server accepts TCP and never answers TLS). */
    o: { maxRequests?: number; connectTimeoutMs?: number } = {},
  ) {
    this.maxRequests = o.maxRequests ?? 64;
    this.connectTimeoutMs = o.connectTimeoutMs ?? 30_000;
  }

  /**
   * Opens a stream to `server` once it has a slot. Rejects with the connection's own error
   * (ECONNREFUSED …) when no connection could be made, so callers can tell a request never sent
   * from one that was.
   */
  async open(server: string, headers: OutgoingHttpHeaders, o: { hasBody: boolean; longRunning: boolean; urgent?: boolean; signal?: AbortSignal | undefined }): Promise<ClientHttp2Stream> {
    const p = this.pooled(server);
    await p.connected;
    if (!this.fits(p, o.longRunning)) {
      const queue = o.longRunning ? p.waitingLong : o.urgent ? p.waitingUrgent : p.waitingRequests;
      await new Promise<void>((go) => queue.push({ longRunning: o.longRunning, go }));
    } else {
      this.reserve(p, o.longRunning);
    }
    // From here the slot is this stream's (reserved when it was handed over).
    // Its socket may be gone before the session has heard (a server that just died).
    if (!p.retired && (p.session.socket?.destroyed ?? true)) p.retire(undefined);
    if (p.retired) {
      this.release(p, o.longRunning);
      return this.open(server, headers, o);
    }
    let stream: ClientHttp2Stream;
    try {
      o.signal?.throwIfAborted();
      // Node would end a DELETE's stream at once, as a GET's; a DELETE may carry DeleteOptions.
      stream = p.session.request(headers, { endStream: !o.hasBody, ...(o.signal ? { signal: o.signal } : {}) });
    } catch (e) {
      this.release(p, o.longRunning);
      throw e;
    }
    p.streams.add(stream);
    p.session.ref();
    stream.once('close', () => {
      p.streams.delete(stream);
      this.release(p, o.longRunning);
      if (p.active === 0) p.session.unref();
    });
    return stream;
  }

  private fits(p: Pooled, longRunning: boolean): boolean {
    return p.active < maxStreams(p.session) && (longRunning || p.requests < this.maxRequests);
  }

  private reserve(p: Pooled, longRunning: boolean): void {
    p.active++;
    if (!longRunning) p.requests++;
  }

  /** A slot is free again: hand it to the next that fits, watches first (they are few and wait on nothing), then heartbeats. */
  private release(p: Pooled, longRunning: boolean): void {
    p.active--;
    if (!longRunning) p.requests--;
    for (const queue of [p.waitingLong, p.waitingUrgent, p.waitingRequests]) {
      while (queue.length > 0 && this.fits(p, queue[0]!.longRunning)) {
        const w = queue.shift()!;
        this.reserve(p, w.longRunning);
        w.go();
      }
    }
  }

  /** Ends the session to `server` now, failing its streams with `why` (a server that failed its health check). */
  drop(server: string, why: Error): void {
    const p = this.pool.get(server);
    if (!p) return;
    this.pool.delete(server);
    p.retire(why);
    p.session.destroy(why);
  }

  close(): void {
    this.closed = true;
    for (const server of [...this.pool.keys()]) this.drop(server, new Error('client closed'));
  }

  private pooled(server: string): Pooled {
    if (this.closed) throw new Error('client closed');
    const have = this.pool.get(server);
    if (have && !have.retired) return have;
    // Flow-control windows as client-go's transport opens them (4 MiB a stream, far more for the
    // connection): with Node's 64 KiB defaults a big list or a burst of watch events read late
    // would hold up every other stream on the connection (a node's Lease renewal among them).
    const session = http2.connect(server, { createConnection: () => tlsConnection(server, this.tls), settings: { initialWindowSize: STREAM_WINDOW } });
    session.once('connect', () => session.setLocalWindowSize(CONNECTION_WINDOW));
    const connected = new Promise<ClientHttp2Session>((resolve, reject) => {
      const timer = setTimeout(() => session.destroy(new Error(`no connection to ${server} within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
      // Ready once the server's SETTINGS are in: until then its stream limit is unknown.
      session.once('remoteSettings', () => {
        clearTimeout(timer);
        resolve(session);
      });
      session.once('error', reject);
      session.once('close', () => {
        clearTimeout(timer);
        reject(new Error(`connection to ${server} closed before it was set up`));
      });
    });
    connected.catch(() => {});
    const p: Pooled = {
      session,
      connected,
      active: 0,
      requests: 0,
      waitingLong: [],
      waitingUrgent: [],
      waitingRequests: [],
      retired: false,
      streams: new Set(),
      retire: (cut) => {
        p.retired = true;
        if (this.pool.get(server) === p) this.pool.delete(server);
        // Whoever waited for a slot goes on, and finds the session retired: it tries a new one.
        for (const w of [...p.waitingLong.splice(0), ...p.waitingUrgent.splice(0), ...p.waitingRequests.splice(0)]) {
          this.reserve(p, w.longRunning);
          w.go();
        }
        // Streams of a connection that is gone would otherwise wait for an answer forever.
        if (cut) for (const st of p.streams) st.destroy(cut);
      },
    };
    const lost = (e?: unknown) => p.retire(e instanceof Error ? e : new Error(`connection to ${server} closed`));
    session.on('error', lost);
    session.once('close', () => lost());
    // A server going away finishes the streams it has; new ones go to a new session.
    session.once('goaway', () => p.retire(undefined));
    session.unref();
    this.pool.set(server, p);
    return p;
  }
}

/** A TLS connection with Nagle off, as Node's HTTP/1.1 agent has: a small request goes out at once, not after the peer's delayed ACK. */
function tlsConnection(server: string, opts: Pick<SecureContextOptions, 'ca' | 'cert' | 'key'>): tls.TLSSocket {
  const url = new URL(server);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const socket = tls.connect({ ...opts, host, port: Number(url.port || 443), ALPNProtocols: ['h2'], ...(isIP(host) ? {} : { servername: host }) });
  socket.setNoDelay(true);
  return socket;
}

function maxStreams(session: ClientHttp2Session): number {
  // No limit announced: 100, the least RFC 9113 recommends a server allow.
  return session.remoteSettings.maxConcurrentStreams ?? 100;
}
