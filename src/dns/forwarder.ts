// Names that are not the cluster's go to the node's resolvers (CoreDNS's `forward . /etc/resolv.conf`):
// the query as it came, over the transport it came on, to each upstream in turn until one answers;
// the reply goes back as the upstream wrote it.
import dgram from 'node:dgram';
import net from 'node:net';
import type { Clock } from '../util/clock.js';

export interface Upstream {
  host: string;
  port: number;
}

/** A resolv.conf nameserver (an address, optionally `address#port` as dnsmasq writes it) as an upstream. */
export function upstreamOf(server: string): Upstream | undefined {
  const m = /^\[?([^\]#]+)\]?(?:#(\d+))?$/.exec(server.trim());
  if (!m || net.isIP(m[1]!) === 0) return undefined;
  return { host: m[1]!, port: m[2] ? Number(m[2]) : 53 };
}

export class Forwarder {
  constructor(
    private readonly upstreams: () => Upstream[],
    private readonly clock: Clock,
    /** How long one upstream gets before the next is tried (CoreDNS's forward: 2 s at most per try). */
    private readonly timeoutMs = 2000,
  ) {}

  /** The first upstream's reply, or undefined when none answered. */
  async forward(query: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    for (const u of this.upstreams()) {
      const reply = await (transport === 'udp' ? this.udp(u, query) : this.tcp(u, query)).catch(() => undefined);
      if (reply) return reply;
    }
    return undefined;
  }

  private udp(u: Upstream, query: Buffer): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const sock = dgram.createSocket(net.isIP(u.host) === 6 ? 'udp6' : 'udp4');
      const id = query.readUInt16BE(0);
      const done = (b: Buffer | undefined) => {
        timer.cancel();
        sock.close();
        resolve(b);
      };
      const timer = this.clock.setTimeout(() => done(undefined), this.timeoutMs);
      sock.on('error', () => done(undefined));
      // A reply to another query (a stray packet) is not this one's.
      sock.on('message', (msg) => {
        if (msg.length >= 12 && msg.readUInt16BE(0) === id) done(msg);
      });
      sock.send(query, u.port, u.host);
    });
  }

  private tcp(u: Upstream, query: Buffer): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const sock = net.connect({ host: u.host, port: u.port });
      let buf = Buffer.alloc(0);
      const done = (b: Buffer | undefined) => {
        timer.cancel();
        sock.destroy();
        resolve(b);
      };
      const timer = this.clock.setTimeout(() => done(undefined), this.timeoutMs);
      sock.on('error', () => done(undefined));
      sock.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(query.length);
        sock.write(Buffer.concat([len, query]));
      });
      sock.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) done(buf.subarray(2, 2 + buf.readUInt16BE(0)));
      });
      sock.on('end', () => done(undefined));
    });
  }
}
