// The cluster DNS server: UDP and TCP on one port, answering from a ClusterDnsIndex (./answer.ts)
// and forwarding the rest (./forwarder.ts). Over UDP an answer is cut to what the client can take
// (512 bytes, or its EDNS0 buffer size) with the TC bit set, so it asks again over TCP, as CoreDNS
// does. Queries from addresses the node does not serve are refused: it must not be an open
// resolver on the node's network.
import dgram from 'node:dgram';
import net from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, OptAnswer, Packet, Question } from 'dns-packet';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';
import { resolve, type DnsSettings, type Rcode } from './answer.js';
import type { ClusterDnsIndex } from './cluster-index.js';
import { Forwarder, type Upstream } from './forwarder.js';

const RCODES: Record<Rcode | 'FORMERR' | 'REFUSED', number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 };
const MIN_UDP = 512;
/** The EDNS0 buffer size this server offers (the DNS flag day's 1232). */
const OWN_UDP = 1232;
/** A TCP connection idle this long is closed (CoreDNS: 10 s). */
const TCP_IDLE_MS = 10_000;
/** ExternalName targets inside the zone are followed at most this deep. */
const MAX_CHASE = 8;
/** Encoded answers kept for repeated questions (valid only while the index is unchanged). */
const ANSWER_CACHE_ENTRIES = 10_000;

export interface ClusterDnsServerOptions {
  index: ClusterDnsIndex;
  settings: () => DnsSettings;
  upstreams: () => Upstream[];
  clock: Clock;
  log: Logger;
  /** Whether a client may ask (default: anyone). */
  allowed?: (address: string) => boolean;
  forwardTimeoutMs?: number;
}

export interface ListenOptions {
  host: string;
  /** 0: any free port (the same one for UDP and TCP when it can be had). */
  port: number;
}

function isLoopback(ip: string): boolean {
  return ip.startsWith('127.') || ip === '::1' || ip.startsWith('::ffff:127.');
}

export class ClusterDnsServer {
  private udp?: dgram.Socket;
  private tcp?: net.Server;
  private readonly forwarder: Forwarder;
  private readonly sockets = new Set<net.Socket>();
  private refusedLogged = false;
  /**
   * The last encoded reply to each question, while the index's serial is the one it was made at:
   * a repeated question costs a decode and a copy. Any change to the cluster empties it, so an
   * answer is never older than the view (unlike a TTL cache).
   */
  private readonly answers = new Map<string, Buffer>();
  private answersSerial = -1;

  constructor(private readonly o: ClusterDnsServerOptions) {
    this.forwarder = new Forwarder(o.upstreams, o.clock, o.forwardTimeoutMs);
  }

  /** Listens on UDP and TCP; answers the port (one for both). */
  async listen(l: ListenOptions): Promise<number> {
    const family = net.isIP(l.host) === 6 ? 'udp6' : 'udp4';
    // An ephemeral UDP port may be taken on TCP: a few tries find one free on both.
    for (let attempt = 0; ; attempt++) {
      const udp = dgram.createSocket(family);
      const port = await new Promise<number>((res, rej) => {
        udp.once('error', rej);
        udp.bind(l.port, l.host, () => res(udp.address().port));
      });
      const tcp = net.createServer((s) => this.serveTcp(s));
      const ok = await new Promise<boolean>((res) => {
        tcp.once('error', () => res(false));
        tcp.listen(port, l.host, () => res(true));
      });
      if (ok) {
        this.udp = udp;
        this.tcp = tcp;
        udp.on('message', (msg, rinfo) => void this.serveUdp(msg, rinfo));
        udp.on('error', (e) => this.o.log.warn({ err: errorText(e) }, 'cluster DNS: UDP socket error'));
        return port;
      }
      udp.close();
      if (l.port !== 0 || attempt >= 20) throw new Error(`cannot listen on TCP ${l.host}:${port}: the port is taken`);
    }
  }

  async close(): Promise<void> {
    this.udp?.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r()));
  }

  private async serveUdp(msg: Buffer, rinfo: dgram.RemoteInfo): Promise<void> {
    const reply = await this.handle(msg, 'udp', rinfo.address).catch(() => undefined);
    if (reply) this.udp?.send(reply, rinfo.port, rinfo.address);
  }

  private serveTcp(s: net.Socket): void {
    this.sockets.add(s);
    s.setTimeout(TCP_IDLE_MS, () => s.destroy());
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => s.destroy());
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = buf.length === 0 ? Buffer.from(d) : Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        void this.handle(msg, 'tcp', s.remoteAddress ?? '').then((reply) => {
          if (!reply || s.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(reply.length);
          s.write(Buffer.concat([len, reply]));
        }, () => undefined);
      }
    });
  }

  /** One query's reply, or undefined for a message that is not a query worth an answer. */
  async handle(msg: Buffer, transport: 'udp' | 'tcp', from: string): Promise<Buffer | undefined> {
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      // Undecodable: FORMERR when at least its header can be read back.
      if (msg.length < 12) return undefined;
      const reply = Buffer.from(msg.subarray(0, 12));
      reply.writeUInt16BE(0x8000 | (msg.readUInt16BE(2) & 0x0100) | RCODES.FORMERR, 2);
      reply.fill(0, 4);
      return reply;
    }
    if (query.type !== 'query') return undefined;
    const opt = (query.additionals ?? []).find((a): a is OptAnswer => a.type === 'OPT');
    const base = (rcode: number): Packet => ({
      type: 'response',
      id: query.id ?? 0,
      flags: ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | dnsPacket.RECURSION_AVAILABLE | rcode,
      questions: query.questions ?? [],
      answers: [],
      authorities: [],
      additionals: opt ? [{ type: 'OPT', name: '.', udpPayloadSize: OWN_UDP, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] } as OptAnswer] : [],
    });
    if (this.o.allowed && !isLoopback(from) && !this.o.allowed(from)) {
      if (!this.refusedLogged) {
        this.refusedLogged = true;
        this.o.log.warn({ client: from }, 'cluster DNS: refused a query from an address this node does not serve (logged once)');
      }
      return dnsPacket.encode(base(RCODES.REFUSED));
    }
    const q = query.questions?.[0];
    if (!q || (query.questions?.length ?? 0) > 1) return dnsPacket.encode(base(RCODES.FORMERR));
    if (this.answersSerial !== this.o.index.serial) {
      this.answers.clear();
      this.answersSerial = this.o.index.serial;
    }
    const cacheKey = `${q.name}|${q.type}|${q.class ?? ''}|${(query.flags ?? 0) & dnsPacket.RECURSION_DESIRED}|${opt ? opt.udpPayloadSize : 0}|${transport}`;
    const cached = this.answers.get(cacheKey);
    if (cached) {
      // The same reply (names spelled as this client spelled them: the key keeps their case) with the query's ID.
      const copy = Buffer.from(cached);
      copy.writeUInt16BE(query.id ?? 0, 0);
      return copy;
    }
    const settings = this.o.settings();
    const r = resolve(q, this.o.index, settings);
    if (r.kind === 'forward') {
      const reply = await this.forwarder.forward(msg, transport);
      return reply ?? dnsPacket.encode(base(RCODES.SERVFAIL));
    }
    const out = base(RCODES[r.rcode]);
    out.flags! |= dnsPacket.AUTHORITATIVE_ANSWER;
    out.answers = [...r.answers];
    out.authorities = r.authorities;
    out.additionals = [...r.additionals, ...(out.additionals ?? [])];
    if (r.chase) out.answers.push(...(await this.chase(r.chase, transport, settings, 1)));
    const limit = transport === 'tcp' ? 65535 : Math.max(MIN_UDP, opt ? Math.min(opt.udpPayloadSize, 65535) : MIN_UDP);
    const reply = fit(out, limit);
    // Answers that went to the node's resolvers (an ExternalName's target) are not the index's to keep.
    if (!r.chase) {
      if (this.answers.size >= ANSWER_CACHE_ENTRIES) this.answers.clear();
      this.answers.set(cacheKey, reply);
    }
    return reply;
  }

  /** The records of an ExternalName's target: from the index when it is a cluster name, else from the node's resolvers. */
  private async chase(q: Question, transport: 'udp' | 'tcp', settings: DnsSettings, depth: number): Promise<Answer[]> {
    const r = resolve(q, this.o.index, settings);
    if (r.kind === 'answer') {
      const more = r.chase && depth < MAX_CHASE ? await this.chase(r.chase, transport, settings, depth + 1) : [];
      return [...r.answers, ...more];
    }
    const query = dnsPacket.encode({ type: 'query', id: Math.floor(Math.random() * 65536), flags: dnsPacket.RECURSION_DESIRED, questions: [q] });
    const reply = await this.forwarder.forward(query, transport);
    if (!reply) return [];
    try {
      return dnsPacket.decode(reply).answers ?? [];
    } catch {
      return [];
    }
  }
}

/**
 * The reply within `limit` bytes (miekg/dns's Truncate, which CoreDNS uses): additional records go
 * first, then answers from the end; TC is set when an answer had to go.
 */
export function fit(p: Packet, limit: number): Buffer {
  const whole = dnsPacket.encode(p);
  if (whole.length <= limit) return whole;
  const opt = (p.additionals ?? []).filter((a) => a.type === 'OPT');
  const answers = p.answers ?? [];
  const withAnswers = (n: number): Packet => ({ ...p, answers: answers.slice(0, n), authorities: n === answers.length ? p.authorities ?? [] : [], additionals: opt });
  const bare = dnsPacket.encode(withAnswers(answers.length));
  if (bare.length <= limit) return bare;
  let lo = 0;
  let hi = answers.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (dnsPacket.encode(withAnswers(mid)).length <= limit) lo = mid;
    else hi = mid - 1;
  }
  const cut = withAnswers(lo);
  cut.flags = (cut.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE;
  return dnsPacket.encode(cut);
}
