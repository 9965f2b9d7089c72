// Streams that leave HTTP: kubectl exec, attach and port-forward ask the API server to upgrade
// their HTTP/1.1 connection (to SPDY/3.1, or to WebSocket with a channel.k8s.io subprotocol). The
// API server relays the upgrade to the node's agent, and the agent to the container runtime's
// streaming server, which speaks the protocol; the two relays only copy bytes once the runtime
// has said 101. Both relays live here, with the way an upgrade request still gets an ordinary
// HTTP answer (a Status, a 404) when it is refused.
import http, { type IncomingMessage, type ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

/** The connection and the bytes read past the request head, handed over by Node's 'upgrade' event. */
export interface Upgrade {
  socket: Duplex;
  head: Buffer;
}

const upgrades = new WeakMap<IncomingMessage, Upgrade>();

/**
 * Turns an 'upgrade' event into the (req, res) pair the normal request path expects: a refusal is
 * written through `res` like any answer (and closes the connection); a handler that accepts takes
 * the connection with upgradeOf().
 */
export function asRequest(req: IncomingMessage, socket: Duplex, head: Buffer): ServerResponse {
  upgrades.set(req, { socket, head });
  const res = new http.ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as unknown as import('node:net').Socket);
  return res;
}

/** The connection of a request that asked to upgrade, undefined for any other. */
export function upgradeOf(req: IncomingMessage): Upgrade | undefined {
  return upgrades.get(req);
}

/**
 * The request headers a relay passes on: those that negotiate the stream protocol, nothing that
 * authenticates the caller (the relay authenticates itself) and no hop-by-hop headers.
 */
const PASSED = ['upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions', 'x-stream-protocol-version', 'user-agent', 'origin'];

export function upgradeHeaders(req: IncomingMessage): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { Connection: 'Upgrade' };
  for (const name of PASSED) {
    const v = req.headers[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Where a relay sends an upgrade: a URL, and for https the client certificate it presents. */
export interface UpgradeTarget {
  url: string;
  method: string;
  headers: OutgoingHttpHeaders;
  tls?: { certPem: string; keyPem: string };
  timeoutMs?: number;
  /** Called once the far side said 101 and bytes flow. */
  onOpen?(): void;
}

/** The far side refused the upgrade: its status and what it said. */
export class UpgradeRefused extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(body || `upgrade refused with ${status}`);
  }
}

/**
 * Opens the upgrade at `target` and, once it answers 101, answers the client with the same 101 and
 * copies bytes both ways until either side closes. Rejects (before anything was written to the
 * client) with UpgradeRefused when the far side answers otherwise, or with its connection error.
 * Resolves when the stream is over.
 */
export function relayUpgrade(client: Upgrade, target: UpgradeTarget): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const u = new URL(target.url);
    const options = { method: target.method, headers: target.headers, agent: false as const, timeout: target.timeoutMs ?? 10_000 };
    const req =
      u.protocol === 'https:'
        ? https.request(u, { ...options, ...(target.tls ? { cert: target.tls.certPem, key: target.tls.keyPem } : {}), rejectUnauthorized: false })
        : http.request(u, options);
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      reject(e);
    };
    req.on('timeout', () => req.destroy(new Error(`timed out connecting to ${u.host}`)));
    req.on('error', fail);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        if (body.length < 64 * 1024) body += d;
      });
      res.on('end', () => fail(new UpgradeRefused(res.statusCode ?? 502, body.trim())));
      res.on('error', fail);
    });
    req.on('upgrade', (res, upstream, upstreamHead) => {
      settled = true;
      target.onOpen?.();
      req.setTimeout(0);
      upstream.setTimeout(0);
      const lines = [`HTTP/1.1 101 ${res.statusMessage || 'Switching Protocols'}`];
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
      client.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upstreamHead.length > 0) client.socket.write(upstreamHead);
      if (client.head.length > 0) upstream.write(client.head);
      let open = 2;
      const closed = () => {
        if (--open === 0) resolve();
      };
      // Either side's error or close ends both: a half-dead relay would hold a shell open forever.
      const end = () => {
        client.socket.destroy();
        upstream.destroy();
      };
      client.socket.on('error', end);
      upstream.on('error', end);
      client.socket.once('close', () => {
        upstream.destroy();
        closed();
      });
      upstream.once('close', () => {
        client.socket.destroy();
        closed();
      });
      client.socket.pipe(upstream);
      upstream.pipe(client.socket);
    });
    req.end();
  });
}
