// Probes: the kubelet's timing and threshold rules on a FakeClock, and the real exec, HTTP and TCP
// actions against local processes and sockets.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { FakeClock } from '../../src/util/clock.js';
import { ContainerProbes, ProbeNotRun, type ProbeKind } from '../../src/agent/probes.js';
import { probeAction, resolvePort } from '../../src/agent/probe-actions.js';
import type { Container, Probe } from '../../src/api/kinds/pod.js';

/** Probes of one container whose actions answer from a script: results[kind] is consumed in order, then the last repeats. */
function scripted(container: Partial<Container>, results: Partial<Record<ProbeKind, boolean[]>>) {
  const clock = new FakeClock();
  const runs: { kind: ProbeKind; at: number; timeoutMs: number }[] = [];
  const failures: string[] = [];
  const kills: string[] = [];
  let changes = 0;
  const kindOf = (p: Probe): ProbeKind => (p === container.startupProbe ? 'startup' : p === container.livenessProbe ? 'liveness' : 'readiness');
  const probes = new ContainerProbes({ name: 'c', ...container } as Container, clock.now(), {
    clock,
    run: async (p, timeoutMs) => {
      const kind = kindOf(p);
      runs.push({ kind, at: clock.now(), timeoutMs });
      const script = results[kind] ?? [true];
      const ok = script.length > 1 ? script.shift()! : script[0]!;
      return ok ? { ok } : { ok, output: `${kind} says no` };
    },
    changed: () => changes++,
    failed: (_kind, output) => failures.push(output),
    kill: (kind, graceMs) => kills.push(`${kind}:${graceMs ?? 'pod'}`),
  });
  return { clock, probes, runs, failures, kills, changes: () => changes };
}

const probe = (p: Partial<Probe> = {}): Probe => ({ exec: { command: ['true'] }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3, ...p });

describe('probe rules', () => {
  it('readiness: not ready until it passes after initialDelaySeconds; unready after failureThreshold failures in a row', async () => {
    const t = scripted({ readinessProbe: probe({ initialDelaySeconds: 5 }) }, { readiness: [true, false, false, true, false, false, false, true] });
    assert.equal(t.probes.started, true);
    assert.equal(t.probes.ready, false, 'a readiness probe starts failed');
    await t.clock.advance(4_999);
    assert.equal(t.runs.length, 0, 'nothing before the initial delay');
    await t.clock.advance(1);
    assert.equal(t.probes.ready, true);
    await t.clock.advance(20_000);
    assert.equal(t.probes.ready, true, 'two failures are below the threshold');
    await t.clock.advance(10_000);
    assert.equal(t.probes.ready, true, 'a success resets the count');
    await t.clock.advance(20_000);
    assert.equal(t.probes.ready, true);
    await t.clock.advance(10_000);
    assert.equal(t.probes.ready, false, 'the third failure in a row');
    await t.clock.advance(10_000);
    assert.equal(t.probes.ready, true);
    assert.deepEqual(t.runs.map((r) => r.at - t.runs[0]!.at), [0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000]);
    assert.ok(t.runs.every((r) => r.timeoutMs === 1000));
    assert.equal(t.failures.length, 5);
    assert.equal(t.failures[0], 'Readiness probe failed: readiness says no');
    assert.deepEqual(t.kills, []);
    t.probes.stop();
  });

  it('successThreshold: readiness needs that many passes in a row', async () => {
    const t = scripted({ readinessProbe: probe({ periodSeconds: 1, successThreshold: 2 }) }, { readiness: [true, false, true, true] });
    await t.clock.advance(0);
    assert.equal(t.probes.ready, false);
    await t.clock.advance(2_000);
    assert.equal(t.probes.ready, false, 'pass, fail, pass');
    await t.clock.advance(1_000);
    assert.equal(t.probes.ready, true);
    t.probes.stop();
  });

  it('startup gates liveness and readiness; a container that never starts is killed after failureThreshold', async () => {
    const t = scripted(
      { startupProbe: probe({ periodSeconds: 2, failureThreshold: 5 }), livenessProbe: probe(), readinessProbe: probe() },
      { startup: [false, false, true] },
    );
    await t.clock.advance(0);
    assert.equal(t.probes.started, false);
    assert.equal(t.probes.ready, false);
    await t.clock.advance(4_000);
    assert.equal(t.probes.started, true, 'third startup probe passed');
    assert.deepEqual([...new Set(t.runs.filter((r) => r.at < t.clock.now() - 1).map((r) => r.kind))], ['startup'], 'only startup ran before it passed');
    const startupRuns = t.runs.filter((r) => r.kind === 'startup').length;
    await t.clock.advance(20_000);
    assert.equal(t.runs.filter((r) => r.kind === 'startup').length, startupRuns, 'startup stops once passed');
    assert.ok(t.runs.some((r) => r.kind === 'liveness') && t.runs.some((r) => r.kind === 'readiness'));
    assert.equal(t.probes.ready, true);
    t.probes.stop();

    const never = scripted({ startupProbe: probe({ periodSeconds: 1, failureThreshold: 3, terminationGracePeriodSeconds: 7 }) }, { startup: [false] });
    await never.clock.advance(1_999);
    assert.deepEqual(never.kills, []);
    await never.clock.advance(1);
    assert.deepEqual(never.kills, ['startup:7000']);
    await never.clock.advance(10_000);
    assert.equal(never.runs.length, 3, 'probes stop with the kill');
  });

  it('liveness: the container is killed after failureThreshold failures in a row, not before', async () => {
    const t = scripted({ livenessProbe: probe({ periodSeconds: 3 }) }, { liveness: [false, false, true, false, false, false] });
    assert.equal(t.probes.ready, true, 'no readiness probe: ready once started');
    await t.clock.advance(9_000);
    assert.deepEqual(t.kills, []);
    await t.clock.advance(6_000);
    assert.deepEqual(t.kills, ['liveness:pod']);
    assert.equal(t.failures.at(-1), 'Liveness probe failed: liveness says no');
  });
});

describe('probes that cannot run', () => {
  it('a run that could not happen (the env unreadable) counts neither way; a thrown error is a failure', async () => {
    const clock = new FakeClock();
    const kills: string[] = [];
    let mode: 'notrun' | 'throw' = 'notrun';
    const probes = new ContainerProbes({ name: 'c', livenessProbe: probe({ periodSeconds: 1, failureThreshold: 2 }) } as Container, clock.now(), {
      clock,
      run: async () => {
        if (mode === 'notrun') throw new ProbeNotRun('cannot resolve the container environment');
        throw new Error('boom');
      },
      changed: () => {},
      failed: () => {},
      kill: (kind) => kills.push(kind),
    });
    await clock.advance(10_000);
    assert.deepEqual(kills, [], 'ten runs that did not happen kill nothing');
    mode = 'throw';
    await clock.advance(2_000);
    assert.deepEqual(kills, ['liveness']);
    probes.stop();
  });
});

describe('probe actions', () => {
  let http: Server;
  let httpPort: number;
  let closedPort: number;
  before(async () => {
    http = createServer((req, res) => {
      const code = req.url === '/healthz' ? 200 : req.url === '/redirect' ? 302 : req.url === '/slow' ? 0 : 503;
      if (code === 0) return; // never answers
      res.writeHead(code, req.headers['x-probe'] ? { 'x-seen': String(req.headers['x-probe']) } : {});
      res.end(String(req.headers['user-agent']));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpPort = (http.address() as AddressInfo).port;
    const tmp = createTcpServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', r));
    closedPort = (tmp.address() as AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
  });
  after(() => {
    http.closeAllConnections();
    http.close();
  });

  const container = (): Container => ({ name: 'web', ports: [{ name: 'http', containerPort: httpPort }] }) as Container;
  const act = (p: Probe, timeoutMs = 1000) => probeAction({ container: container(), podIP: '127.0.0.1', env: async () => ({ PATH: process.env.PATH ?? '', WORD: 'hello' }), agentTag: 'test' })(p, timeoutMs);

  it('exec: exit 0 passes; otherwise fails with the output, and a command over its timeout fails', async () => {
    assert.deepEqual(await act({ exec: { command: ['sh', '-c', 'test "$WORD" = hello'] } }), { ok: true });
    assert.deepEqual(await act({ exec: { command: ['sh', '-c', 'echo not healthy >&2; exit 3'] } }), { ok: false, output: 'not healthy' });
    assert.deepEqual(await act({ exec: { command: ['no-such-binary-here'] } }), { ok: false, output: 'exec: "no-such-binary-here": executable file not found in $PATH' });
    const slow = await act({ exec: { command: ['sleep', '5'] } }, 200);
    assert.equal(slow.ok, false);
    assert.match(slow.output!, /timed out/);
  });

  it('httpGet: 2xx and 3xx pass, others fail with the status, named ports resolve, refused and slow servers fail', async () => {
    assert.deepEqual(await act({ httpGet: { path: '/healthz', port: 'http' } }), { ok: true });
    assert.deepEqual(await act({ httpGet: { path: '/redirect', port: httpPort } }), { ok: true });
    assert.deepEqual(await act({ httpGet: { path: '/other', port: httpPort } }), { ok: false, output: 'HTTP probe failed with statuscode: 503' });
    assert.deepEqual(await act({ httpGet: { path: '/', port: closedPort } }), { ok: false, output: `Get "http://127.0.0.1:${closedPort}/": dial tcp 127.0.0.1:${closedPort}: connect: connection refused` });
    assert.deepEqual(await act({ httpGet: { path: '/', port: 'nope' } }), { ok: false, output: 'unable to find port "nope" in container web' });
    const slow = await act({ httpGet: { path: '/slow', port: httpPort } }, 200);
    assert.equal(slow.ok, false);
    assert.match(slow.output!, /Client.Timeout exceeded/);
  });

  it('tcpSocket: a listening port passes, a closed one fails', async () => {
    assert.deepEqual(await act({ tcpSocket: { port: httpPort } }), { ok: true });
    assert.deepEqual(await act({ tcpSocket: { port: closedPort } }), { ok: false, output: `dial tcp 127.0.0.1:${closedPort}: connect: connection refused` });
  });

  it('resolves numeric, numeric-string and named ports', () => {
    const c = { name: 'c', ports: [{ name: 'metrics', containerPort: 9090 }] } as Container;
    assert.equal(resolvePort(8080, c), 8080);
    assert.equal(resolvePort('8080', c), 8080);
    assert.equal(resolvePort('metrics', c), 9090);
    assert.equal(resolvePort('missing', c), undefined);
  });
});
