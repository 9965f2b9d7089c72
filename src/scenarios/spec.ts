// A scenario as data: the cluster it needs, the workload, the steps (waits, observation windows,
// faults) and what each mode must show. Read from YAML (the built-in ones are files in
// scenarios/ a user can copy and edit); every mistake is reported with its path in the file.
//
// Time in a scenario is story time, on upstream's scale: `observe: 2m` and a fault's `for:` are
// divided by the run's --speed like every upstream default. An expectation's `within:` is wall
// time as measured, since it judges skiff's own reaction (a Node restored within a second).
import { parse as parseYaml } from 'yaml';
import { quantityErrors } from '../api/quantity.js';
import { parseDuration } from '../util/duration.js';
import type { Mode } from './timeline.js';

export const MODES: readonly Mode[] = ['skiff', 'kubernetes'];

export interface ClusterShape {
  /** API servers: 1 runs on SQLite; more run on a 3-member etcd. */
  servers: number;
  /** Worker agents, named node-1 … node-N. */
  nodes: number;
  /** HAProxy in front of the servers as the control-plane endpoint; agents join through it. */
  endpoint: boolean;
  /** Which server address the agents are given: the first member's only, or every member's. */
  join: 'first' | 'all';
  /**
   * The workers are instances of one node group `node` in a local cloud (`skiff cloud serve`),
   * sized by the cluster autoscaler between min and max; the first `min` start with the cluster
   * (node-1 … node-min), the ones it adds are node-(min+1) and on.
   */
  cloud?: { min: number; max: number; cpu: string; memory: string };
}

export interface Workload {
  /** Replicas of a Deployment `demo` (simulated pods), spread over the workers. */
  replicas: number;
  /** Each pod's cpu request (a quantity). */
  cpu: string;
}

export type FaultAction =
  /** `kubectl delete node` on the target node. */
  | 'delete-node'
  /** Signals to the target's process (an agent by node name, a server by member name server-N). */
  | 'sigkill'
  | 'sigterm'
  | 'sigstop'
  | 'sigcont'
  /** SIGSTOP for `for`, then SIGCONT: a machine that froze and came back. */
  | 'freeze'
  /** Every API server unreachable for `for` (all members stopped with SIGSTOP, then resumed). */
  | 'api-outage'
  /** `skiff node retire` on the target node. */
  | 'retire'
  /** The target node cut off from every API server for `for` (its network, not its process). */
  | 'partition'
  /** With a cloud: the target node's instance is killed and forgotten by the cloud. */
  | 'instance-lost'
  /** With a cloud: the target node's instance is stopped but stays listed. */
  | 'instance-shutdown';

export const FAULT_ACTIONS: readonly FaultAction[] = ['delete-node', 'sigkill', 'sigterm', 'sigstop', 'sigcont', 'freeze', 'api-outage', 'retire', 'partition', 'instance-lost', 'instance-shutdown'];

const NODE_FAULTS: readonly FaultAction[] = ['delete-node', 'retire', 'partition', 'instance-lost', 'instance-shutdown'];
/** Faults a node of a cloud cannot take: its machine is the cloud's (use the instance faults). */
const PROCESS_FAULTS: readonly FaultAction[] = ['sigkill', 'sigterm', 'sigstop', 'sigcont', 'freeze', 'partition'];

export type Step =
  | { kind: 'wait-ready' }
  /** Story time to let pass, watching. */
  | { kind: 'observe'; ms: number }
  | { kind: 'fault'; action: FaultAction; target: string; forMs?: number; label: string };

export type Expectation =
  | { kind: 'node-restored'; node: string; withinMs: number }
  | { kind: 'node-absent'; node: string }
  | { kind: 'nodes-stay-ready'; nodes: string[] }
  | { kind: 'node-not-ready'; node: string }
  /** Not Ready after the fault, then Ready again before the end. */
  | { kind: 'node-recovers'; node: string }
  | { kind: 'pods-kept'; node: string }
  | { kind: 'pods-lost'; node: string; min: number }
  | { kind: 'pods-running'; count: number }
  | { kind: 'log-lines'; process: string; match?: string; min?: number; max?: number }
  | { kind: 'events'; reason: string; min?: number; max?: number }
  /** How long, in all, the node's cloud instance ran with no Node object (a zombie), in wall time. */
  | { kind: 'machine-without-node'; node: string; minMs?: number; maxMs?: number }
  /** How long, in all, some pod waited with no node to run on after the fault, in wall time. */
  | { kind: 'pods-unscheduled'; minMs?: number; maxMs?: number }
  /** Cloud instances that appeared after the fault (machines bought). */
  | { kind: 'machines-added'; min?: number; max?: number };

export const EXPECTATION_KINDS: readonly Expectation['kind'][] = ['node-restored', 'node-absent', 'nodes-stay-ready', 'node-not-ready', 'node-recovers', 'pods-kept', 'pods-lost', 'pods-running', 'log-lines', 'events', 'machine-without-node', 'machines-added', 'pods-unscheduled'];

export interface ScenarioSpec {
  name: string;
  description: string;
  cluster: ClusterShape;
  workload: Workload;
  steps: Step[];
  expect: Record<Mode, Expectation[]>;
}

export class ScenarioError extends Error {}

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reader {
  constructor(private readonly file: string) {}

  fail(path: string, msg: string): never {
    throw new ScenarioError(`${this.file}: ${path}: ${msg}`);
  }

  obj(v: unknown, path: string): Json {
    if (!isObj(v)) this.fail(path, 'must be a mapping');
    return v;
  }

  str(v: unknown, path: string): string {
    if (typeof v !== 'string' || v === '') this.fail(path, 'must be a non-empty string');
    return v;
  }

  int(v: unknown, path: string, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.fail(path, `must be a whole number from ${min} to ${max}`);
    return v;
  }

  duration(v: unknown, path: string): number {
    if (typeof v !== 'string') this.fail(path, 'must be a duration such as 500ms, 10s or 2m');
    try {
      return parseDuration(v);
    } catch (e) {
      return this.fail(path, (e as Error).message);
    }
  }

  only(o: Json, path: string, keys: string[]): void {
    for (const k of Object.keys(o)) if (!keys.includes(k)) this.fail(`${path}.${k}`, `unknown field (known: ${keys.join(', ')})`);
  }
}

function quantity(r: Reader, v: unknown, path: string): string {
  const q = typeof v === 'number' ? String(v) : r.str(v, path);
  const errors = quantityErrors(q);
  if (errors.length > 0) r.fail(path, `${q}: ${errors.join('; ')} (a quantity such as 500m, 2 or 16Gi)`);
  return q;
}

/** A node name the cluster has: node-1 … node-N. */
function checkNode(r: Reader, shape: ClusterShape, v: unknown, path: string): string {
  const name = r.str(v, path);
  const m = /^node-(\d+)$/.exec(name);
  const most = shape.cloud?.max ?? shape.nodes;
  if (!m || Number(m[1]) < 1 || Number(m[1]) > most) r.fail(path, `no node ${name} in this cluster (node-1 … node-${most})`);
  return name;
}

function checkProcess(r: Reader, shape: ClusterShape, v: unknown, path: string): string {
  const name = r.str(v, path);
  if (/^server-\d+$/.test(name)) {
    if (Number(name.slice(7)) > shape.servers) r.fail(path, `no ${name} in this cluster (server-1 … server-${shape.servers})`);
    return name;
  }
  return checkNode(r, shape, name, path);
}

function parseStep(r: Reader, shape: ClusterShape, v: unknown, path: string): Step {
  if (v === 'wait-ready') return { kind: 'wait-ready' };
  const o = r.obj(v, path);
  if ('observe' in o) {
    r.only(o, path, ['observe']);
    return { kind: 'observe', ms: r.duration(o.observe, `${path}.observe`) };
  }
  if ('fault' in o) {
    r.only(o, path, ['fault', 'target', 'for', 'label']);
    const action = r.str(o.fault, `${path}.fault`) as FaultAction;
    if (!FAULT_ACTIONS.includes(action)) r.fail(`${path}.fault`, `unknown fault ${action} (known: ${FAULT_ACTIONS.join(', ')})`);
    const target = action === 'api-outage' ? 'servers' : NODE_FAULTS.includes(action) ? checkNode(r, shape, o.target, `${path}.target`) : checkProcess(r, shape, o.target, `${path}.target`);
    const isInstance = action === 'instance-lost' || action === 'instance-shutdown';
    if (isInstance && !shape.cloud) r.fail(`${path}.fault`, `${action} needs a cluster with a cloud (cluster.cloud)`);
    if (shape.cloud && PROCESS_FAULTS.includes(action) && target.startsWith('node-')) r.fail(`${path}.fault`, `with a cloud, a node's machine is the cloud's: use instance-lost or instance-shutdown`);
    const timed = action === 'freeze' || action === 'api-outage' || action === 'partition';
    if (timed && o.for === undefined) r.fail(`${path}.for`, `${action} needs a duration`);
    if (!timed && o.for !== undefined) r.fail(`${path}.for`, `only freeze, partition and api-outage last for a while`);
    const forMs = timed ? r.duration(o.for, `${path}.for`) : undefined;
    const label = o.label === undefined ? `${action} ${target}` : r.str(o.label, `${path}.label`);
    return { kind: 'fault', action, target, label, ...(forMs !== undefined ? { forMs } : {}) };
  }
  return r.fail(path, 'a step is wait-ready, {observe: DURATION} or {fault: ACTION, target: NAME}');
}

function parseExpectation(r: Reader, shape: ClusterShape, v: unknown, path: string): Expectation {
  const o = r.obj(v, path);
  const keys = Object.keys(o);
  if (keys.length !== 1) r.fail(path, `one expectation per entry (known: ${EXPECTATION_KINDS.join(', ')})`);
  const kind = keys[0] as Expectation['kind'];
  if (!EXPECTATION_KINDS.includes(kind)) r.fail(`${path}.${kind}`, `unknown expectation (known: ${EXPECTATION_KINDS.join(', ')})`);
  const p = `${path}.${kind}`;
  const a = r.obj(o[kind], p);
  const optInt = (k: string) => (a[k] === undefined ? {} : { [k]: r.int(a[k], `${p}.${k}`, 0, 1_000_000) });
  const optDuration = (k: 'min' | 'max') => (a[k] === undefined ? {} : { [`${k}Ms`]: r.duration(a[k], `${p}.${k}`) });
  switch (kind) {
    case 'node-restored':
      r.only(a, p, ['node', 'within']);
      return { kind, node: checkNode(r, shape, a.node, `${p}.node`), withinMs: r.duration(a.within, `${p}.within`) };
    case 'node-absent':
    case 'node-not-ready':
    case 'node-recovers':
    case 'pods-kept':
      r.only(a, p, ['node']);
      return { kind, node: checkNode(r, shape, a.node, `${p}.node`) };
    case 'nodes-stay-ready': {
      r.only(a, p, ['nodes']);
      if (a.nodes === 'all') return { kind, nodes: Array.from({ length: shape.nodes }, (_, i) => `node-${i + 1}`) };
      if (!Array.isArray(a.nodes)) r.fail(`${p}.nodes`, 'must be all or a list of node names');
      return { kind, nodes: a.nodes.map((n, i) => checkNode(r, shape, n, `${p}.nodes[${i}]`)) };
    }
    case 'pods-lost':
      r.only(a, p, ['node', 'min']);
      return { kind, node: checkNode(r, shape, a.node, `${p}.node`), min: a.min === undefined ? 1 : r.int(a.min, `${p}.min`, 1, 100_000) };
    case 'pods-running':
      r.only(a, p, ['count']);
      return { kind, count: r.int(a.count, `${p}.count`, 0, 100_000) };
    case 'log-lines':
      r.only(a, p, ['process', 'match', 'min', 'max']);
      return { kind, process: checkProcess(r, shape, a.process, `${p}.process`), ...(a.match === undefined ? {} : { match: r.str(a.match, `${p}.match`) }), ...optInt('min'), ...optInt('max') };
    case 'events':
      r.only(a, p, ['reason', 'min', 'max']);
      return { kind, reason: r.str(a.reason, `${p}.reason`), ...optInt('min'), ...optInt('max') };
    case 'machine-without-node': {
      if (!shape.cloud) r.fail(p, 'needs a cluster with a cloud (cluster.cloud)');
      r.only(a, p, ['node', 'min', 'max']);
      return { kind, node: checkNode(r, shape, a.node, `${p}.node`), ...optDuration('min'), ...optDuration('max') };
    }
    case 'pods-unscheduled':
      r.only(a, p, ['min', 'max']);
      return { kind, ...optDuration('min'), ...optDuration('max') };
    case 'machines-added':
      if (!shape.cloud) r.fail(p, 'needs a cluster with a cloud (cluster.cloud)');
      r.only(a, p, ['min', 'max']);
      return { kind, ...optInt('min'), ...optInt('max') };
  }
}

/** Parses and checks a scenario file's text; `file` names it in errors. */
export function parseScenario(text: string, file: string): ScenarioSpec {
  const r: Reader = new Reader(file);
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ScenarioError(`${file}: not YAML: ${(e as Error).message}`);
  }
  const o = r.obj(doc, '(top)');
  r.only(o, '(top)', ['name', 'description', 'cluster', 'workload', 'steps', 'expect']);
  const name = r.str(o.name, 'name');
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(name)) r.fail('name', 'use lowercase letters, digits and dashes');
  const c = r.obj(o.cluster ?? {}, 'cluster');
  r.only(c, 'cluster', ['servers', 'nodes', 'endpoint', 'join', 'cloud']);
  const servers = c.servers === undefined ? 1 : r.int(c.servers, 'cluster.servers', 1, 3);
  if (servers === 2) r.fail('cluster.servers', 'use 1 (SQLite) or 3 (etcd): two members cannot outvote one lost');
  if (c.endpoint !== undefined && typeof c.endpoint !== 'boolean') r.fail('cluster.endpoint', 'must be true or false');
  if (c.join !== undefined && c.join !== 'first' && c.join !== 'all') r.fail('cluster.join', 'must be first or all');
  const shape: ClusterShape = { servers, nodes: c.nodes === undefined ? 2 : r.int(c.nodes, 'cluster.nodes', 1, 50), endpoint: c.endpoint === true, join: (c.join as 'first' | 'all' | undefined) ?? 'all' };
  if (shape.endpoint && servers === 1) r.fail('cluster.endpoint', 'a control-plane endpoint needs servers: 3');
  if (c.cloud !== undefined) {
    const k = r.obj(c.cloud, 'cluster.cloud');
    r.only(k, 'cluster.cloud', ['min', 'max', 'cpu', 'memory']);
    if (c.nodes !== undefined) r.fail('cluster.nodes', 'with a cloud the node group\'s min says how many nodes start');
    const min = r.int(k.min, 'cluster.cloud.min', 1, 20);
    const max = r.int(k.max, 'cluster.cloud.max', min, 20);
    shape.cloud = { min, max, cpu: quantity(r, k.cpu ?? '4', 'cluster.cloud.cpu'), memory: quantity(r, k.memory ?? '16Gi', 'cluster.cloud.memory') };
    shape.nodes = min;
  }
  const w = r.obj(o.workload ?? {}, 'workload');
  r.only(w, 'workload', ['replicas', 'cpu']);
  const workload = { replicas: w.replicas === undefined ? 0 : r.int(w.replicas, 'workload.replicas', 0, 1000), cpu: quantity(r, w.cpu ?? '100m', 'workload.cpu') };
  if (!Array.isArray(o.steps) || o.steps.length === 0) r.fail('steps', 'must be a non-empty list');
  const steps = o.steps.map((s, i) => parseStep(r, shape, s, `steps[${i}]`));
  const e = r.obj(o.expect ?? {}, 'expect');
  r.only(e, 'expect', [...MODES]);
  const expect = {} as Record<Mode, Expectation[]>;
  for (const mode of MODES) {
    const list = e[mode] ?? [];
    if (!Array.isArray(list)) r.fail(`expect.${mode}`, 'must be a list');
    expect[mode] = list.map((x, i) => parseExpectation(r, shape, x, `expect.${mode}[${i}]`));
  }
  return { name, description: o.description === undefined ? '' : r.str(o.description, 'description').trim(), cluster: shape, workload, steps, expect };
}
