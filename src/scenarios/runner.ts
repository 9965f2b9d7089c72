// One engine for every scenario: start its cluster for the mode, record, play the steps (waits,
// observation windows, faults) on the compressed clock, judge the expectations, stop everything.
// Progress goes to `say` as one line per step and a line every few seconds while something is
// awaited, so a person watching knows what the run is doing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RETIRE_ANNOTATION, nodePath } from '../agent/api.js';
import { isNodeReady, type Node } from '../api/kinds/node.js';
import type { KubeList } from '../api/types.js';
import type { ApiClient } from '../client/rest.js';
import { errorText } from '../util/error-text.js';
import { systemClock, type Clock } from '../util/clock.js';
import { rfc3339 } from '../util/time.js';
import { ScenarioCluster } from './cluster.js';
import { judge } from './expectations.js';
import { Recorder } from './recorder.js';
import type { ScenarioSpec, Step } from './spec.js';
import type { Mode, ScenarioRun } from './timeline.js';
import { agentModeFlags, agentTimingFlags, autoscalerModeFlags, autoscalerTimingFlags, serverTimingFlags } from './timings.js';

export interface RunOptions {
  mode: Mode;
  /** Every upstream timing and every story duration is divided by this. */
  speed: number;
  say(msg: string): void;
  signal?: AbortSignal;
  /** Keep the cluster's data and logs (always kept when the run fails). */
  keep?: boolean;
  clock?: Clock;
}

const READY_TIMEOUT_MS = 90_000;

function describeStep(s: Step, speed: number): string {
  switch (s.kind) {
    case 'wait-ready':
      return 'wait until every node is Ready and the workload Running';
    case 'observe':
      return `observe for ${Math.round(s.ms / 1000)} s of story time (${(s.ms / speed / 1000).toFixed(1)} s here)`;
    case 'fault':
      return `fault: ${s.label}${s.forMs ? ` for ${Math.round(s.forMs / 1000)} s of story time` : ''}`;
  }
}

const DEMO = 'demo';

function deployment(replicas: number, cpu: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: DEMO, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: DEMO } },
      template: { metadata: { labels: { app: DEMO } }, spec: { containers: [{ name: 'app', image: 'registry.example/demo:1', resources: { requests: { cpu, memory: '64Mi' } } }] } },
    },
  };
}

export async function runScenario(spec: ScenarioSpec, o: RunOptions): Promise<ScenarioRun> {
  const dir = mkdtempSync(join(tmpdir(), `skiff-scenario-${spec.name}-${o.mode}-`));
  const began = Date.now();
  let cluster: ScenarioCluster | undefined;
  let recorder: Recorder | undefined;
  let api: ApiClient | undefined;
  let error: string | undefined;
  const elapsed = () => `${((Date.now() - began) / 1000).toFixed(1).padStart(5)}s`;
  const say = (msg: string) => o.say(`[${o.mode} ${elapsed()}] ${msg}`);
  const workers = Array.from({ length: spec.cluster.nodes }, (_, i) => `node-${i + 1}`);
  try {
    cluster = await ScenarioCluster.start({
      dir,
      shape: spec.cluster,
      serverFlags: serverTimingFlags(o.speed),
      agentFlags: [...agentTimingFlags(o.speed), ...agentModeFlags(o.mode)],
      autoscalerFlags: [...autoscalerTimingFlags(o.speed), ...autoscalerModeFlags(o.mode)],
      partitioned: [...new Set(spec.steps.flatMap((s) => (s.kind === 'fault' && s.action === 'partition' ? [s.target] : [])))],
      say,
    });
    api = cluster.client(5_000);
    recorder = new Recorder(api, Date.now(), [...cluster.servers, ...cluster.agents].map((p) => ({ process: p.name, file: p.logFile })));
    await recorder.start();
    const cloud = cluster.cloud;
    if (cloud) recorder.watchCloud(() => cloud.instances(), (i) => cluster!.instanceLog(i));
    const ctx: StepContext = { cluster, api, recorder, clock: o.clock ?? systemClock, speed: o.speed, workers, replicas: spec.workload.replicas, cpu: spec.workload.cpu, workloadCreated: false, say, ...(o.signal ? { signal: o.signal } : {}) };
    for (const [i, step] of spec.steps.entries()) {
      const label = describeStep(step, o.speed);
      say(`step ${i + 1}/${spec.steps.length}: ${label}`);
      recorder.add({ t: recorder.now(), kind: 'step', label });
      await playStep(step, ctx);
    }
  } catch (e) {
    error = o.signal?.aborted ? 'interrupted' : errorText(e);
    say(`run failed: ${error}`);
  }
  const entries = recorder?.stop().filter((e) => e.t >= 0) ?? [];
  const durationMs = recorder ? recorder.now() : 0;
  const nodes = allNodes(workers, entries);
  const run: ScenarioRun = {
    scenario: spec.name,
    description: spec.description,
    mode: o.mode,
    speed: o.speed,
    startedAt: rfc3339(recorder?.startMs ?? began),
    durationMs,
    nodes,
    processes: [...(cluster?.servers.map((s) => s.name) ?? []), ...nodes],
    entries,
    verdicts: [],
    passed: false,
    ...(error ? { error } : {}),
  };
  run.verdicts = error ? [] : spec.expect[o.mode].map((x) => judge(x, run));
  run.passed = !error && run.verdicts.every((v) => v.passed);
  say('stopping the cluster');
  await cluster?.stop();
  if (run.passed && !o.keep) rmSync(dir, { recursive: true, force: true });
  else say(`data and logs kept in ${dir}`);
  return run;
}

/** The workers the run started, then any node that appeared later (one the autoscaler added), by name. */
function allNodes(workers: string[], entries: { kind: string; node?: string }[]): string[] {
  const later = new Set<string>();
  for (const e of entries) if ((e.kind === 'node-registered' || e.kind === 'instance') && e.node && !workers.includes(e.node)) later.add(e.node);
  return [...workers, ...[...later].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))];
}

interface StepContext {
  cluster: ScenarioCluster;
  api: ApiClient;
  recorder: Recorder;
  clock: Clock;
  speed: number;
  workers: string[];
  replicas: number;
  cpu: string;
  /** The workload goes in once every node is Ready, so the scheduler spreads it over all of them. */
  workloadCreated: boolean;
  say(msg: string): void;
  signal?: AbortSignal;
}

async function playStep(step: Step, c: StepContext): Promise<void> {
  switch (step.kind) {
    case 'wait-ready':
      return waitReady(c);
    case 'observe':
      return c.clock.sleep(step.ms / c.speed, c.signal);
    case 'fault':
      c.recorder.add({ t: c.recorder.now(), kind: 'fault', action: step.action, target: step.target, label: step.label });
      switch (step.action) {
        case 'delete-node':
          await c.api.delete(nodePath(step.target));
          return;
        case 'retire':
          await c.api.patch(nodePath(step.target), { metadata: { annotations: { [RETIRE_ANNOTATION]: 'true' } } }, 'merge');
          return;
        case 'sigkill':
        case 'sigterm':
        case 'sigstop':
        case 'sigcont':
          c.cluster.signal(step.target, step.action.toUpperCase() as NodeJS.Signals);
          return;
        case 'freeze':
          c.cluster.signal(step.target, 'SIGSTOP');
          await c.clock.sleep(step.forMs! / c.speed, c.signal);
          c.cluster.signal(step.target, 'SIGCONT');
          c.recorder.add({ t: c.recorder.now(), kind: 'fault', action: 'thaw', target: step.target, label: `${step.target} continues` });
          return;
        case 'partition':
          c.cluster.proxy(step.target).partition();
          await c.clock.sleep(step.forMs! / c.speed, c.signal);
          c.cluster.proxy(step.target).heal();
          c.recorder.add({ t: c.recorder.now(), kind: 'fault', action: 'heal', target: step.target, label: `${step.target} reconnected` });
          return;
        case 'instance-lost':
        case 'instance-shutdown': {
          const inst = await c.cluster.instanceOf(step.target);
          await c.cluster.cloud!.applyFault(inst.id, step.action === 'instance-lost' ? 'lost' : 'shutdown');
          return;
        }
        case 'api-outage':
          for (const s of c.cluster.servers) c.cluster.signal(s.name, 'SIGSTOP');
          await c.clock.sleep(step.forMs! / c.speed, c.signal);
          for (const s of c.cluster.servers) c.cluster.signal(s.name, 'SIGCONT');
          c.recorder.add({ t: c.recorder.now(), kind: 'fault', action: 'api-back', target: 'servers', label: 'API servers back' });
          return;
      }
  }
}

/** Every worker Ready and the workload's pods Running, or a clear error naming what is missing. */
async function waitReady(c: StepContext): Promise<void> {
  const deadline = c.clock.now() + READY_TIMEOUT_MS;
  let lastSaid = c.clock.now();
  for (;;) {
    let missing: string[] = [];
    try {
      const nodes = await c.api.get<KubeList<Node>>('/api/v1/nodes');
      const ready = new Set(nodes.items.filter(isNodeReady).map((n) => n.metadata.name!));
      missing = c.workers.filter((w) => !ready.has(w));
      if (missing.length === 0 && !c.workloadCreated && c.replicas > 0) {
        await c.api.create('/apis/apps/v1/namespaces/default/deployments', deployment(c.replicas, c.cpu));
        c.workloadCreated = true;
      }
      const running = [...c.recorder.runningPods().values()].reduce((a, b) => a + b, 0);
      if (missing.length === 0 && running >= c.replicas) return;
      if (missing.length === 0) missing = [`${c.replicas - running} of ${c.replicas} pods Running`];
    } catch (e) {
      missing = [`the API (${errorText(e)})`];
    }
    if (c.clock.now() > deadline) throw new Error(`not ready within ${READY_TIMEOUT_MS / 1000} s: waiting for ${missing.join(', ')}`);
    if (c.clock.now() - lastSaid > 5_000) {
      c.say(`waiting for: ${missing.join(', ')}`);
      lastSaid = c.clock.now();
    }
    await c.clock.sleep(200, c.signal);
  }
}
