// Suite `node-death` (issue #4): node death → replacement pods Running, with a fast profile
// (target ≤ 30 s) and with upstream-default timings.
//
// A real `skiff server` and 3 real `skiff agent`s (simulated runtime, this build's skiff), a
// Deployment of 6 replicas spread over them. At t0 the agent with the most replicas is SIGKILLed
// (its whole process group); the suite then polls the API and records when
//   - its Node turns NotReady (Ready condition no longer True),
//   - the node.kubernetes.io/unreachable:NoExecute taint appears,
//   - every pod it ran is evicted (deletionTimestamp set, or gone),
//   - the ReplicaSet has created replacements, and
//   - all 6 replicas are Running on the other nodes.
// The default profile takes ~6 minutes (50 s grace + 300 s toleration); --quick skips it.
//
//   node dist/bench/run.js node-death [--quick]
import { eventually } from '../../test/support/eventually.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeList } from '../../src/api/types.js';
import type { ApiClient } from '../../src/client/rest.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { makeTempDir, progress, removeTempDir, round, skiffEntry, sleep, startChild, type ManagedChild, type Table } from '../lib/util.js';

const TOKEN = 'nodedt.0123456789abcdef';
const AGENTS = 3;
const REPLICAS = 6;
const APP = 'nd-web';
const NAMESPACE = 'default';
const TARGET_FAST_S = 30;
const UNREACHABLE = 'node.kubernetes.io/unreachable';

interface Profile {
  name: 'fast' | 'default';
  title: string;
  serverFlags: string[];
  agentFlags: string[];
  /** How often the API is polled after the kill. */
  pollMs: number;
  /** Give up after this long. */
  timeoutMs: number;
  /** Progress line every this often while waiting. */
  reportMs: number;
}

const FAST: Profile = {
  name: 'fast',
  title: 'fast profile',
  serverFlags: ['--node-monitor-period', '1s', '--node-monitor-grace-period', '5s', '--default-unreachable-toleration-seconds', '5', '--default-not-ready-toleration-seconds', '5'],
  agentFlags: ['--node-lease-duration-seconds', '4', '--node-status-update-frequency', '1s'],
  pollMs: 100,
  timeoutMs: 120_000,
  reportMs: 5_000,
};

const DEFAULT: Profile = {
  name: 'default',
  title: 'upstream-default timings',
  // Every flag at its default: --node-monitor-period 5s, --node-monitor-grace-period 50s,
  // --default-{unreachable,not-ready}-toleration-seconds 300; agents: Lease 40 s renewed every
  // 10 s, status every 10 s.
  serverFlags: [],
  agentFlags: [],
  pollMs: 250,
  timeoutMs: 600_000,
  reportMs: 30_000,
};

/** Seconds from the SIGKILL to each phase (undefined: not reached before the timeout). */
export interface NodeDeathPhases {
  notReady?: number;
  unreachableNoSchedule?: number;
  unreachableNoExecute?: number;
  firstPodEvicted?: number;
  allPodsEvicted?: number;
  replacementsCreated?: number;
  replacementsScheduled?: number;
  allRunningElsewhere?: number;
}

export interface NodeDeathRun {
  profile: Profile['name'];
  serverFlags: string[];
  agentFlags: string[];
  victim: string;
  podsOnVictim: number;
  podsPerNodeBefore: Record<string, number>;
  /** tolerationSeconds of the unreachable:NoExecute toleration the pods got by default. */
  unreachableTolerationSeconds?: number;
  phases: NodeDeathPhases;
  /** Poll interval: each figure is late by at most this much (plus one request). */
  pollMs: number;
  completed: boolean;
  seconds: number;
}


const isReady = (n: Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const hasTaint = (n: Node, key: string, effect: string) => (n.spec?.taints ?? []).some((t) => t.key === key && t.effect === effect);

async function listPods(client: ApiClient): Promise<Pod[]> {
  return (await client.get<KubeList<Pod>>(`/api/v1/namespaces/${NAMESPACE}/pods`, { query: { labelSelector: `app=${APP}` } })).items;
}

function deployment(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: APP, namespace: NAMESPACE },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: { app: APP } },
      template: {
        metadata: { labels: { app: APP } },
        spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
      },
    },
  };
}

export async function benchNodeDeath(p: Profile): Promise<NodeDeathRun> {
  let server: SkiffServer | undefined;
  const agents: { name: string; child: ManagedChild }[] = [];
  const dir = makeTempDir(`skiff-bench-nodedeath-${p.name}-`);
  let client: ApiClient | undefined;
  try {
    server = await startSkiffServer({ serverArgs: ['--token', TOKEN, ...p.serverFlags] });
    client = server.client(10_000);
    const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
    for (let i = 1; i <= AGENTS; i++) {
      const name = `nd-${p.name}-${i}`;
      const dataDir = join(dir, name);
      const child = startChild(
        `skiff agent ${name}`,
        process.execPath,
        [
          skiffEntry(), 'agent',
          '--server', serverUrl,
          '--token', TOKEN,
          '--ca-file', join(server.dataDir, 'tls', 'ca.crt'),
          '--data-dir', dataDir,
          '--node-name', name,
          '--runtime', 'simulated',
          '--kubelet-port', '0',
          ...p.agentFlags,
        ],
        join(dir, `${name}.log`),
      );
      agents.push({ name, child });
    }
    const c = client;
    await eventually(async () => {
      for (const a of agents) if (!a.child.alive()) throw new Error(`agent ${a.name} exited:\n${a.child.logTail()}`);
      const nodes = await c.get<KubeList<Node>>('/api/v1/nodes');
      return nodes.items.filter(isReady).length === AGENTS;
    }, 60_000, `${AGENTS} nodes Ready`, 100);
    progress(`node-death (${p.name}): ${AGENTS} agents Ready; creating a Deployment of ${REPLICAS}`);
    await c.create(`/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, deployment());
    const before = await eventually(async () => {
      const pods = await listPods(c);
      const running = pods.filter((x) => x.status?.phase === 'Running' && !x.metadata.deletionTimestamp);
      return running.length === REPLICAS ? running : undefined;
    }, 60_000, `${REPLICAS} replicas Running`, 100);
    const perNode: Record<string, number> = {};
    for (const a of agents) perNode[a.name] = 0;
    for (const x of before) perNode[x.spec!.nodeName!] = (perNode[x.spec!.nodeName!] ?? 0) + 1;
    const victimName = Object.entries(perNode).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
    const victim = agents.find((a) => a.name === victimName)!;
    const onVictim = new Set(before.filter((x) => x.spec?.nodeName === victimName).map((x) => x.metadata.uid!));
    const toleration = before[0]?.spec?.tolerations?.find((t) => t.key === UNREACHABLE && t.effect === 'NoExecute');
    const tolSeconds = toleration?.tolerationSeconds;
    progress(
      `node-death (${p.name}): pods per node ${JSON.stringify(perNode)}; unreachable toleration ${tolSeconds ?? 'none'} s; SIGKILL ${victimName} (pid ${victim.child.pid})`,
    );
    // Let the cluster settle (status posts after the pods started) before the kill.
    await sleep(2000);

    const phases: NodeDeathPhases = {};
    const t0 = performance.now();
    victim.child.killNow();
    const since = () => round((performance.now() - t0) / 1000, 2);
    const mark = (k: keyof NodeDeathPhases, cond: boolean) => {
      if (cond && phases[k] === undefined) {
        phases[k] = since();
        progress(`node-death (${p.name}): ${k} at ${phases[k]} s`);
      }
    };
    let lastReport = t0;
    let state = '';
    while (performance.now() - t0 < p.timeoutMs) {
      const [node, pods] = await Promise.all([c.get<Node>(`/api/v1/nodes/${victimName}`).catch(() => undefined), listPods(c).catch(() => undefined)]);
      if (node) {
        mark('notReady', !isReady(node));
        mark('unreachableNoSchedule', hasTaint(node, UNREACHABLE, 'NoSchedule'));
        mark('unreachableNoExecute', hasTaint(node, UNREACHABLE, 'NoExecute'));
      }
      if (pods) {
        const byUid = new Map(pods.map((x) => [x.metadata.uid!, x]));
        const evicted = [...onVictim].filter((u) => !byUid.has(u) || byUid.get(u)!.metadata.deletionTimestamp);
        mark('firstPodEvicted', evicted.length > 0);
        mark('allPodsEvicted', evicted.length === onVictim.size);
        const live = pods.filter((x) => !x.metadata.deletionTimestamp);
        const replacements = live.filter((x) => !onVictim.has(x.metadata.uid!) && !before.some((b) => b.metadata.uid === x.metadata.uid));
        mark('replacementsCreated', replacements.length >= onVictim.size);
        mark('replacementsScheduled', replacements.length >= onVictim.size && replacements.every((x) => x.spec?.nodeName && x.spec.nodeName !== victimName));
        const runningElsewhere = live.filter((x) => x.status?.phase === 'Running' && x.spec?.nodeName !== victimName);
        mark('allRunningElsewhere', runningElsewhere.length === REPLICAS);
        state = `${evicted.length}/${onVictim.size} evicted, ${replacements.length} replacements, ${runningElsewhere.length}/${REPLICAS} Running elsewhere`;
      }
      if (phases.allRunningElsewhere !== undefined) break;
      if (performance.now() - lastReport > p.reportMs) {
        lastReport = performance.now();
        progress(`node-death (${p.name}): ${since().toFixed(0)} s after the kill: Node ${node ? (isReady(node) ? 'Ready' : 'NotReady') : '?'}, ${state}`);
      }
      await sleep(p.pollMs);
    }
    const completed = phases.allRunningElsewhere !== undefined;
    if (!completed) progress(`node-death (${p.name}): gave up after ${p.timeoutMs / 1000} s: ${state}`);
    return {
      profile: p.name,
      serverFlags: p.serverFlags,
      agentFlags: p.agentFlags,
      victim: victimName,
      podsOnVictim: onVictim.size,
      podsPerNodeBefore: perNode,
      ...(tolSeconds !== undefined ? { unreachableTolerationSeconds: tolSeconds } : {}),
      phases,
      pollMs: p.pollMs,
      completed,
      seconds: since(),
    };
  } finally {
    client?.close();
    // Agents: SIGKILL (simulated pods, nothing to clean up; a graceful exit would wait for API
    // calls to a server that is going away too). The server: SIGTERM.
    await Promise.all(
      agents.map(async (a) => {
        a.child.killNow();
        await Promise.race([a.child.exited, sleep(5000)]);
        await a.child.stop(0);
      }),
    );
    await server?.stop();
    removeTempDir(dir);
  }
}

const PHASES: { key: keyof NodeDeathPhases; label: string; upstream: string }[] = [
  { key: 'notReady', label: 'Node NotReady (Ready ≠ True)', upstream: '~40–55' },
  { key: 'unreachableNoExecute', label: 'unreachable:NoExecute taint', upstream: '~45–60' },
  { key: 'firstPodEvicted', label: 'first pod evicted', upstream: '~345–360' },
  { key: 'allPodsEvicted', label: 'all its pods evicted', upstream: '~345–360' },
  { key: 'replacementsCreated', label: 'replacement pods created', upstream: '~345–360' },
  { key: 'replacementsScheduled', label: 'replacements scheduled', upstream: '~345–360' },
  { key: 'allRunningElsewhere', label: `all ${REPLICAS} replicas Running elsewhere`, upstream: '~350+' },
];

function fmtS(s: number | undefined, completed: boolean): string {
  if (s === undefined) return completed ? '-' : 'not reached';
  return s.toFixed(1);
}

export function nodeDeathTable(fast: NodeDeathRun, def: NodeDeathRun | undefined, skippedWhy?: string): Table {
  const defCell = (k: keyof NodeDeathPhases) => (def ? fmtS(def.phases[k], def.completed) : (skippedWhy ?? 'skipped'));
  const fastDone = fast.phases.allRunningElsewhere;
  return {
    title: `node-death: SIGKILL of an agent (${fast.podsOnVictim} of ${REPLICAS} replicas on it) → replacements Running, seconds after the kill`,
    headers: ['phase', 'fast profile (s)', 'upstream-default timings (s)', 'upstream expectation (s)'],
    rows: PHASES.map((ph) => [ph.label, fmtS(fast.phases[ph.key], fast.completed), defCell(ph.key), ph.upstream]),
    notes: [
      `fast profile: server ${FAST.serverFlags.join(' ')}; agents ${FAST.agentFlags.join(' ')}. Target: all replicas Running ≤ ${TARGET_FAST_S} s → ${fastDone === undefined ? 'NOT REACHED' : fastDone <= TARGET_FAST_S ? `met (${fastDone.toFixed(1)} s)` : `MISSED (${fastDone.toFixed(1)} s)`}.`,
      `upstream-default timings: every flag at its default (node-monitor-period 5 s, grace 50 s, tolerations 300 s; agent Lease 40 s renewed every 10 s)${def ? '' : ` — ${skippedWhy ?? 'skipped'}`}.`,
      'upstream expectation (kube-controller-manager defaults): the kubelet renews its Lease every 10 s, so the 50 s grace runs out 40–50 s after death (+ up to the 5 s monitor period); the NoExecute taint follows on the next monitor pass (it acts on the condition it observed), eviction 300 s after the taint (DefaultTolerationSeconds), then scheduling and container start (image pulls: more).',
      `figures are polled every ${fast.pollMs} ms (fast) / ${def?.pollMs ?? DEFAULT.pollMs} ms (default); taint/eviction timestamps in the API have 1 s resolution, so the controllers' own clocks round too.`,
    ],
  };
}

export const nodeDeathSuite: Suite = {
  name: 'node-death',
  description: `node death → replacement pods Running: fast profile (target ≤ ${TARGET_FAST_S} s) and upstream-default timings (~6 min; skipped with --quick)`,
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    progress('node-death: fast profile');
    const fast = await benchNodeDeath(FAST);
    let def: NodeDeathRun | undefined;
    const skipped = ctx.quick ? 'skipped (--quick)' : undefined;
    if (ctx.quick) progress('node-death: --quick: skipping the upstream-default profile (~6 min)');
    else {
      progress('node-death: upstream-default timings (expect ~6 minutes)');
      def = await benchNodeDeath(DEFAULT);
    }
    return {
      tables: [nodeDeathTable(fast, def, skipped)],
      data: { replicas: REPLICAS, agents: AGENTS, targetFastSeconds: TARGET_FAST_S, fast, ...(def ? { default: def } : { default: skipped }) },
    };
  },
};
