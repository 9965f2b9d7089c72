// Suite `dns`: queries/s and latency of skiff's cluster DNS server beside dnsmasq (Debian's), both
// holding the same 1,000 Service names, each in a process of its own on 127.0.0.1, driven by the
// same load generator in this process: one UDP socket, a fixed number of queries in flight, A
// queries for names picked at random; every reply is checked for the right address. Alternating
// rounds, so both see the same machine.
import dgram from 'node:dgram';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, fmtMs, freePort, makeTempDir, percentile, progress, removeTempDir, round, seededRandom, sleep, startChild, type ManagedChild, type Table } from '../lib/util.js';
import { benchServiceIp, benchServiceName } from '../lib/dns-names.js';

const DNSMASQ = '/usr/sbin/dnsmasq';
const SERVICES = 1000;
const IN_FLIGHT = 32;
const ROUNDS = 3;
/** A query unanswered this long is counted lost (and its slot reused). */
const LOST_MS = 1000;

export interface DnsLoadResult {
  queries: number;
  qps: number;
  p50Ms: number;
  p99Ms: number;
  wrong: number;
  lost: number;
}

/** Precomputed queries (one per name), so encoding costs the generator nothing per query. */
function queries(): Buffer[] {
  return Array.from({ length: SERVICES }, (_, i) => dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: benchServiceName(i), class: 'IN' }] }));
}

/** The load: IN_FLIGHT queries outstanding at all times for durationMs. */
export async function dnsLoad(port: number, durationMs: number, seed: number): Promise<DnsLoadResult> {
  const packets = queries();
  const expected = Array.from({ length: SERVICES }, (_, i) => benchServiceIp(i));
  const rand = seededRandom(seed);
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  const pending = new Map<number, { sent: number; name: number }>();
  const latencies: number[] = [];
  let wrong = 0;
  let lost = 0;
  let nextId = 1;
  let stop = false;
  const end = performance.now() + durationMs;
  const send = () => {
    if (stop) return;
    const id = nextId;
    nextId = (nextId % 65535) + 1;
    const name = Math.floor(rand() * SERVICES);
    const q = Buffer.from(packets[name]!);
    q.writeUInt16BE(id, 0);
    pending.set(id, { sent: performance.now(), name });
    sock.send(q, port, '127.0.0.1');
  };
  sock.on('message', (m) => {
    const now = performance.now();
    const id = m.readUInt16BE(0);
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    latencies.push(now - p.sent);
    const answers = dnsPacket.decode(m).answers ?? [];
    if (!answers.some((a) => a.type === 'A' && a.data === expected[p.name])) wrong++;
    if (now < end) send();
    else stop = true;
  });
  for (let i = 0; i < IN_FLIGHT; i++) send();
  // Lost queries free their slot (UDP on loopback rarely drops, but a full socket buffer can).
  while (performance.now() < end) {
    await sleep(100);
    const now = performance.now();
    for (const [id, p] of pending) {
      if (now - p.sent > LOST_MS) {
        pending.delete(id);
        lost++;
        send();
      }
    }
  }
  stop = true;
  await sleep(50);
  sock.close();
  latencies.sort((a, b) => a - b);
  return { queries: latencies.length, qps: Math.round(latencies.length / (durationMs / 1000)), p50Ms: round(percentile(latencies, 50), 3), p99Ms: round(percentile(latencies, 99), 3), wrong, lost };
}

async function waitForAnswer(port: number, child: ManagedChild): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (!child.alive()) throw new Error(`${child.name} exited:\n${child.logTail()}`);
    const r = await dnsLoad(port, 100, 1).catch(() => undefined);
    if (r && r.queries > 0) return;
    await sleep(100);
  }
  throw new Error(`${child.name} did not answer:\n${child.logTail()}`);
}

export const dnsSuite: Suite = {
  name: 'dns',
  description: `cluster DNS queries/s and p99 (${SERVICES} Services, ${IN_FLIGHT} in flight over UDP) beside dnsmasq holding the same names`,
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    if (!existsSync(DNSMASQ)) throw new Error('the dns suite needs dnsmasq (Debian: dnsmasq-base) as its peer');
    const dir = makeTempDir('skiff-bench-dns-');
    const hosts = join(dir, 'hosts');
    writeFileSync(hosts, Array.from({ length: SERVICES }, (_, i) => `${benchServiceIp(i)} ${benchServiceName(i)}\n`).join(''));
    const [ourPort, peerPort] = [await freePort(), await freePort()];
    const ours = startChild('skiff-dns', process.execPath, [fileURLToPath(new URL('../lib/dns-server-main.js', import.meta.url)), String(ourPort), String(SERVICES)], join(dir, 'skiff-dns.log'));
    const peer = startChild('dnsmasq', DNSMASQ, ['--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', `--addn-hosts=${hosts}`, '--bind-interfaces', '--listen-address=127.0.0.1', `--port=${peerPort}`, '--user=root', `--pid-file=${join(dir, 'dnsmasq.pid')}`, '--cache-size=10000'], join(dir, 'dnsmasq.log'));
    const rounds: { ours: DnsLoadResult; peer: DnsLoadResult }[] = [];
    try {
      await waitForAnswer(ourPort, ours);
      await waitForAnswer(peerPort, peer);
      // Warm both (JIT, caches).
      await dnsLoad(ourPort, 1000, 2);
      await dnsLoad(peerPort, 1000, 2);
      const n = ctx.quick ? 1 : ROUNDS;
      for (let i = 0; i < n; i++) {
        progress(`dns: round ${i + 1}/${n}: skiff then dnsmasq, ${ctx.durationMs} ms each`);
        const o = await dnsLoad(ourPort, ctx.durationMs, 10 + i);
        const p = await dnsLoad(peerPort, ctx.durationMs, 10 + i);
        rounds.push({ ours: o, peer: p });
        progress(`dns: round ${i + 1}: skiff ${o.qps}/s p99 ${o.p99Ms} ms, dnsmasq ${p.qps}/s p99 ${p.p99Ms} ms`);
      }
    } finally {
      await ours.stop(3000);
      await peer.stop(3000);
      removeTempDir(dir);
    }
    const mean = (f: (r: { ours: DnsLoadResult; peer: DnsLoadResult }) => number) => Math.round(rounds.reduce((a, r) => a + f(r), 0) / rounds.length);
    const table: Table = {
      title: `dns: A queries/s over UDP on 127.0.0.1, ${SERVICES} Service names, ${IN_FLIGHT} in flight (same load generator, alternating rounds)`,
      headers: ['round', 'skiff queries/s', 'p50', 'p99', 'dnsmasq queries/s', 'p50', 'p99', 'wrong or lost'],
      rows: [
        ...rounds.map((r, i) => [String(i + 1), fmtInt(r.ours.qps), fmtMs(r.ours.p50Ms), fmtMs(r.ours.p99Ms), fmtInt(r.peer.qps), fmtMs(r.peer.p50Ms), fmtMs(r.peer.p99Ms), `${r.ours.wrong + r.ours.lost} / ${r.peer.wrong + r.peer.lost}`]),
        ['mean', fmtInt(mean((r) => r.ours.qps)), '', '', fmtInt(mean((r) => r.peer.qps)), '', '', ''],
      ],
      notes: ['the load generator is one Node process on the same 2 cores: both servers share the machine with it, so these are lower bounds for both'],
    };
    return { tables: [table], data: { services: SERVICES, inFlight: IN_FLIGHT, rounds } };
  },
};
