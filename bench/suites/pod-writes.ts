// Suite `pod-writes`: the API work of starting a pod, one step at a time, against one server on
// SQLite. A pod's start is a create (its controller), a binding (the scheduler), two status writes
// from its node (containers waiting, then running) and a few Events; the steps run here one after
// another for P pods, 64 at a time, so each step's server CPU per call and its rate stand alone.
// The sum of the steps' CPU is the server's cost of one pod start: the ceiling of `scale`'s pods/s.
// Status writes are sent as the pod's node (impersonated, as `skiff sim` sends them), so the node
// authorizer is in the path as it is for a real agent. Beside them, apart from the sum, a node's
// heartbeat: its Lease created, then renewed (every 10 s per node: 5,000 nodes renew 500 a second).
import { performance } from 'node:perf_hooks';
import type { ApiClient } from '../../src/client/rest.js';
import type { KubeObject } from '../../src/api/types.js';
import { NODES_GROUP, nodeUserName } from '../../src/auth/user.js';
import { profileTable, profilesIn, summarizeNewProfiles } from '../lib/cpuprofile.js';
import { startSkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { CpuMeter, fmtInt, percentile, progress, round, type Table } from '../lib/util.js';

const CONCURRENCY = 64;
const NODES = 20;
const NS = 'default';

interface Step {
  name: string;
  calls: number;
  seconds: number;
  cpuMsPerCall: number;
  /** Of which on the main thread (the rest: the SQLite writer thread, the garbage collector's helpers). */
  mainMsPerCall: number;
  p50Ms: number;
  p99Ms: number;
  /** The step's span on the profiler's clock (microseconds). */
  windowUs: { startUs: number; endUs: number };
}
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function step(name: string, serverPid: number, count: number, call: (i: number) => Promise<unknown>): Promise<Step> {
  const latencies: number[] = [];
  const cpu = new CpuMeter(serverPid);
  const startUs = nowUs();
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const t = performance.now();
      await call(i);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const used = cpu.read();
  latencies.sort((a, b) => a - b);
  const s: Step = { name, calls: count, seconds, cpuMsPerCall: (((used.pidPct ?? 0) / 100) * seconds * 1000) / count, mainMsPerCall: (((used.mainThreadPct ?? 0) / 100) * seconds * 1000) / count, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), windowUs: { startUs, endUs: nowUs() } };
  progress(`pod-writes: ${name}: ${fmtInt(count)} in ${seconds.toFixed(1)} s, ${round(s.cpuMsPerCall, 2)} ms server CPU each`);
  return s;
}

const podName = (i: number) => `p-${i}`;
const nodeOf = (i: number) => `bench-node-${i % NODES}`;
const asNode = (i: number) => ({ headers: { 'Impersonate-User': nodeUserName(nodeOf(i)), 'Impersonate-Group': NODES_GROUP } });

function podBody(i: number): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: podName(i), labels: { app: 'load', 'pod-template-hash': '5d8f7c9b6' }, ownerReferences: [] },
    // A scheduler nobody runs: the binding step below is the only one to place them.
    spec: { schedulerName: 'bench-nobody', containers: [{ name: 'c', image: 'registry.example/load:1', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
  };
}

function waitingStatus(now: string): unknown {
  return {
    status: {
      phase: 'Pending',
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      startTime: now,
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: now },
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]', lastTransitionTime: now },
        { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]', lastTransitionTime: now },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ContainerCreating' } }, lastState: {}, ready: false, restartCount: 0, image: 'registry.example/load:1', imageID: '', started: false }],
    },
  };
}

function runningStatus(now: string, i: number): unknown {
  return {
    status: {
      phase: 'Running',
      podIP: '127.0.0.1',
      podIPs: [{ ip: '127.0.0.1' }],
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: now },
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        { type: 'Ready', status: 'True', lastTransitionTime: now },
        { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: [
        { name: 'c', state: { running: { startedAt: now } }, lastState: {}, ready: true, restartCount: 0, image: 'registry.example/load:1', imageID: '', started: true, containerID: `skiff-simulated://${i}` },
      ],
    },
  };
}

function eventBody(i: number, now: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${podName(i)}.` },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: podName(i) },
    reason: 'Started',
    message: 'Started container c',
    type: 'Normal',
    source: { component: 'kubelet', host: nodeOf(i) },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    reportingComponent: 'kubelet',
    reportingInstance: nodeOf(i),
  };
}

async function runSteps(admin: ApiClient, pid: number, pods: number): Promise<Step[]> {
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const path = (i: number) => `/api/v1/namespaces/${NS}/pods/${podName(i)}`;
  const steps: Step[] = [];
  steps.push(await step('create pod (its controller)', pid, pods, (i) => admin.create(`/api/v1/namespaces/${NS}/pods`, podBody(i))));
  steps.push(
    await step('bind pod (the scheduler)', pid, pods, (i) =>
      admin.create(`${path(i)}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: podName(i) }, target: { apiVersion: 'v1', kind: 'Node', name: nodeOf(i) } }),
    ),
  );
  steps.push(await step('status: containers waiting (its node)', pid, pods, (i) => admin.patch(`${path(i)}/status`, waitingStatus(now()), 'merge', asNode(i))));
  steps.push(await step('status: running and ready (its node)', pid, pods, (i) => admin.patch(`${path(i)}/status`, runningStatus(now(), i), 'merge', asNode(i))));
  steps.push(await step('event (its node)', pid, pods, (i) => admin.create(`/api/v1/namespaces/${NS}/events`, eventBody(i, now()), asNode(i))));
  return steps;
}

/** A node's heartbeat, as an agent sends it: its Lease created once, then renewed with a PUT. */
async function heartbeatSteps(admin: ApiClient, pid: number, nodes: number): Promise<Step[]> {
  const nowMicro = () => new Date().toISOString().replace(/Z$/, '000Z');
  const node = (i: number) => `lease-node-${i}`;
  const as = (i: number) => ({ headers: { 'Impersonate-User': nodeUserName(node(i)), 'Impersonate-Group': NODES_GROUP } });
  const leasePath = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
  const leases: KubeObject[] = [];
  const created = await step('create Lease (a node registering)', pid, nodes, async (i) => {
    leases[i] = await admin.create<KubeObject>(leasePath, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: node(i) }, spec: { holderIdentity: node(i), leaseDurationSeconds: 40, renewTime: nowMicro() } }, as(i));
  });
  const renewed = await step('renew Lease (a node, every 10 s)', pid, nodes, (i) => {
    const l = leases[i]!;
    return admin.replace(`${leasePath}/${node(i)}`, { ...l, spec: { ...(l.spec as object), renewTime: nowMicro() } }, as(i));
  });
  return [created, renewed];
}

export const podWritesSuite: Suite = {
  name: 'pod-writes',
  description: 'the API calls of one pod start (create, bind, 2 status writes, an event), each step alone: server CPU per call, rate, p50/p99',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const pods = ctx.quick ? 2000 : 5000;
    const server = await startSkiffServer(ctx.cpuProfDir ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProfDir] } : {});
    const before = ctx.cpuProfDir ? profilesIn(ctx.cpuProfDir) : undefined;
    const admin = server.client(60_000);
    let steps: Step[];
    let heartbeats: Step[];
    try {
      steps = await runSteps(admin, server.pid, pods);
      heartbeats = await heartbeatSteps(admin, server.pid, pods);
    } finally {
      admin.close();
      await server.stop();
    }
    const total = steps.reduce((a, s) => a + s.cpuMsPerCall, 0);
    const main = steps.reduce((a, s) => a + s.mainMsPerCall, 0);
    const table: Table = {
      title: `pod-writes: the API calls of starting ${fmtInt(pods)} pods, step by step, ${CONCURRENCY} at a time (one server, SQLite, HTTPS)`,
      headers: ['step', 'calls/s', 'server CPU per call', 'of which main thread', 'p50', 'p99'],
      rows: [
        ...steps.map((s) => [s.name, fmtInt(Math.round(s.calls / s.seconds)), `${round(s.cpuMsPerCall, 2)} ms`, `${round(s.mainMsPerCall, 2)} ms`, `${round(s.p50Ms, 1)} ms`, `${round(s.p99Ms, 1)} ms`]),
        ['one pod start (the sum)', fmtInt(Math.round(1000 / main)), `${round(total, 2)} ms`, `${round(main, 2)} ms`, '', ''],
        ...heartbeats.map((s) => [`${s.name}, not in the sum`, fmtInt(Math.round(s.calls / s.seconds)), `${round(s.cpuMsPerCall, 2)} ms`, `${round(s.mainMsPerCall, 2)} ms`, `${round(s.p50Ms, 1)} ms`, `${round(s.p99Ms, 1)} ms`]),
      ],
      notes: [
        'calls/s of the sum: the pods/s the server\'s main thread could start if nothing else ran (the scale suite\'s goal: 500); the SQLite writer runs on a thread of its own.',
        'Server CPU is the whole process (its SQLite writer thread included), from /proc, over each step.',
        `Heartbeats: 5,000 nodes renew 500 Leases a second, ${round(heartbeats[1]!.mainMsPerCall * 50, 0)} % of the main thread at this cost, before their status reports.`,
      ],
    };
    const tables = [table];
    if (ctx.cpuProfDir && before) for (const p of summarizeNewProfiles(ctx.cpuProfDir, before, undefined, 30)) tables.push(profileTable(p, 'pod-writes: server'));
    return { tables, data: { pods, concurrency: CONCURRENCY, steps, heartbeats, cpuMsPerPodStart: round(total, 3), mainThreadMsPerPodStart: round(main, 3) } };
  },
};
