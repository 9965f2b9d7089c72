// Simulated behaviour as data, in the manner of KWOK's stages: which pods' containers start after
// how long, run until they exit by themselves (so a Job's pods complete) or fail, and take how
// long to stop. A YAML file of stages, tried in order; the first whose selector matches a
// container decides, and a container no stage matches keeps the runtime's defaults. Durations
// are Go-style; a jitter adds a uniform random extra in [0, jitter).
//
//   pods:
//     - name: jobs-complete
//       selector: {ownerKind: Job}
//       start: {delay: 1s, jitter: 2s}
//       exit: {after: 5s, jitter: 5s, code: 0}
//     - name: canary-crashes
//       selector: {matchLabels: {track: canary}, container: app}
//       exit: {after: 30s, code: 1}
//     - name: slow-stop
//       selector: {namespace: batch, matchAnnotations: {sim.skiff.dev/slow: "true"}}
//       stop: {delay: 20s}
//   nodes:
//     - name: memory-pressure
//       selector: {names: "sim-00[1-5]"}          # a regular expression on the node name; also matchLabels
//       conditions:
//         - {type: MemoryPressure, status: "True", after: 1m, for: 30s, reason: SimulatedPressure}
//
// A node stage's conditions count from the node's start: each holds from `after` for `for` (for
// good without it), over what the node reports by itself.
import { parse as parseYaml } from 'yaml';
import type { ObjectMeta } from '../../api/types.js';
import { parseDuration } from '../../util/duration.js';

export interface Delay {
  ms: number;
  jitterMs: number;
}

export interface PodStage {
  name: string;
  selector: {
    matchLabels?: Record<string, string>;
    matchAnnotations?: Record<string, string>;
    namespace?: string;
    /** The kind of the pod's controller (ownerReferences with controller: true), e.g. Job. */
    ownerKind?: string;
    container?: string;
  };
  start?: Delay;
  exit?: Delay & { code: number };
  stop?: Delay;
}

/** What a stage is matched against: the pod's metadata and the container's name. */
export interface StageSubject {
  meta: Pick<ObjectMeta, 'labels' | 'annotations' | 'namespace' | 'ownerReferences'>;
  container: string;
}

export interface NodeConditionStep {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  afterMs: number;
  /** How long it holds; undefined: for good. */
  forMs?: number;
}

export interface NodeStage {
  name: string;
  selector: { names?: RegExp; matchLabels?: Record<string, string> };
  conditions: NodeConditionStep[];
}

export interface Stages {
  pods: PodStage[];
  nodes: NodeStage[];
}

export class StageError extends Error {}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(file: string, path: string, msg: string): never {
  throw new StageError(`${file}: ${path}: ${msg}`);
}

function only(file: string, o: Json, path: string, keys: string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) fail(file, `${path}.${k}`, `unknown field (known: ${keys.join(', ')})`);
}

function duration(file: string, v: unknown, path: string): number {
  if (v === undefined) return 0;
  if (typeof v !== 'string') fail(file, path, 'must be a duration such as 500ms, 2s or 1m');
  try {
    return parseDuration(v);
  } catch (e) {
    return fail(file, path, (e as Error).message);
  }
}

function stringMap(file: string, v: unknown, path: string): Record<string, string> {
  if (!isObj(v)) fail(file, path, 'must be a mapping of strings');
  for (const [k, x] of Object.entries(v)) if (typeof x !== 'string') fail(file, `${path}.${k}`, 'must be a string (quote numbers and booleans)');
  return v as Record<string, string>;
}

function delay(file: string, v: unknown, path: string, first: 'delay' | 'after', more: string[] = []): Delay & Json {
  if (!isObj(v)) fail(file, path, `must be a mapping ({${first}: 1s, jitter: 2s})`);
  only(file, v, path, [first, 'jitter', ...more]);
  return { ms: duration(file, v[first], `${path}.${first}`), jitterMs: duration(file, v.jitter, `${path}.jitter`) };
}

/** Parses a stages file; `file` names it in errors, each with its place (`pods[1].exit.code`). */
export function parseStages(text: string, file: string): Stages {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new StageError(`${file}: not YAML: ${(e as Error).message}`);
  }
  if (!isObj(doc)) fail(file, '(top)', 'must be a mapping with a list under pods or nodes');
  only(file, doc, '(top)', ['pods', 'nodes']);
  if (doc.pods !== undefined && !Array.isArray(doc.pods)) fail(file, 'pods', 'must be a list of stages');
  if (doc.nodes !== undefined && !Array.isArray(doc.nodes)) fail(file, 'nodes', 'must be a list of stages');
  return { pods: ((doc.pods ?? []) as unknown[]).map((raw, i) => podStage(file, raw, i)), nodes: ((doc.nodes ?? []) as unknown[]).map((raw, i) => nodeStage(file, raw, i)) };
}

const CONDITION_STATUS = ['True', 'False', 'Unknown'];

function nodeStage(file: string, raw: unknown, i: number): NodeStage {
  const p = `nodes[${i}]`;
  if (!isObj(raw)) fail(file, p, 'must be a mapping');
  only(file, raw, p, ['name', 'selector', 'conditions']);
  if (typeof raw.name !== 'string' || !raw.name) fail(file, `${p}.name`, 'must be a non-empty string');
  const sel = raw.selector === undefined ? {} : raw.selector;
  if (!isObj(sel)) fail(file, `${p}.selector`, 'must be a mapping');
  only(file, sel, `${p}.selector`, ['names', 'matchLabels']);
  let names: RegExp | undefined;
  if (sel.names !== undefined) {
    if (typeof sel.names !== 'string') fail(file, `${p}.selector.names`, 'must be a regular expression (a string)');
    try {
      names = new RegExp(`^(?:${sel.names})$`);
    } catch (e) {
      fail(file, `${p}.selector.names`, (e as Error).message);
    }
  }
  if (!Array.isArray(raw.conditions) || raw.conditions.length === 0) fail(file, `${p}.conditions`, 'must be a non-empty list');
  const conditions = raw.conditions.map((c, j): NodeConditionStep => {
    const q = `${p}.conditions[${j}]`;
    if (!isObj(c)) fail(file, q, 'must be a mapping');
    only(file, c, q, ['type', 'status', 'reason', 'message', 'after', 'for']);
    if (typeof c.type !== 'string' || !c.type) fail(file, `${q}.type`, 'must be a condition type such as Ready or MemoryPressure');
    if (typeof c.status !== 'string' || !CONDITION_STATUS.includes(c.status)) fail(file, `${q}.status`, 'must be "True", "False" or "Unknown" (quoted)');
    for (const k of ['reason', 'message'] as const) if (c[k] !== undefined && typeof c[k] !== 'string') fail(file, `${q}.${k}`, 'must be a string');
    return {
      type: c.type,
      status: c.status as NodeConditionStep['status'],
      reason: (c.reason as string | undefined) ?? 'SimulatedByStage',
      message: (c.message as string | undefined) ?? `set by stage ${raw.name as string}`,
      afterMs: duration(file, c.after, `${q}.after`),
      ...(c.for !== undefined ? { forMs: duration(file, c.for, `${q}.for`) } : {}),
    };
  });
  return {
    name: raw.name,
    selector: { ...(names ? { names } : {}), ...(sel.matchLabels !== undefined ? { matchLabels: stringMap(file, sel.matchLabels, `${p}.selector.matchLabels`) } : {}) },
    conditions,
  };
}

/** The node stages that apply to a node, by its name and labels. */
export function nodeStagesFor(stages: readonly NodeStage[], name: string, labels: Record<string, string>): NodeStage[] {
  return stages.filter((s) => (!s.selector.names || s.selector.names.test(name)) && subset(s.selector.matchLabels, labels));
}

/** The conditions the node's stages set `elapsedMs` after its start (the last stage naming a type wins). */
export function stagedConditions(stages: readonly NodeStage[], elapsedMs: number): NodeConditionStep[] {
  const out = new Map<string, NodeConditionStep>();
  for (const s of stages) for (const c of s.conditions) if (elapsedMs >= c.afterMs && (c.forMs === undefined || elapsedMs < c.afterMs + c.forMs)) out.set(c.type, c);
  return [...out.values()];
}

function podStage(file: string, raw: unknown, i: number): PodStage {
  {
    const p = `pods[${i}]`;
    if (!isObj(raw)) fail(file, p, 'must be a mapping');
    only(file, raw, p, ['name', 'selector', 'start', 'exit', 'stop']);
    if (typeof raw.name !== 'string' || !raw.name) fail(file, `${p}.name`, 'must be a non-empty string');
    const sel = raw.selector === undefined ? {} : raw.selector;
    if (!isObj(sel)) fail(file, `${p}.selector`, 'must be a mapping');
    only(file, sel, `${p}.selector`, ['matchLabels', 'matchAnnotations', 'namespace', 'ownerKind', 'container']);
    for (const k of ['namespace', 'ownerKind', 'container'] as const) if (sel[k] !== undefined && typeof sel[k] !== 'string') fail(file, `${p}.selector.${k}`, 'must be a string');
    const stage: PodStage = {
      name: raw.name,
      selector: {
        ...(sel.matchLabels !== undefined ? { matchLabels: stringMap(file, sel.matchLabels, `${p}.selector.matchLabels`) } : {}),
        ...(sel.matchAnnotations !== undefined ? { matchAnnotations: stringMap(file, sel.matchAnnotations, `${p}.selector.matchAnnotations`) } : {}),
        ...(sel.namespace !== undefined ? { namespace: sel.namespace as string } : {}),
        ...(sel.ownerKind !== undefined ? { ownerKind: sel.ownerKind as string } : {}),
        ...(sel.container !== undefined ? { container: sel.container as string } : {}),
      },
    };
    if (raw.start !== undefined) stage.start = delay(file, raw.start, `${p}.start`, 'delay');
    if (raw.stop !== undefined) stage.stop = delay(file, raw.stop, `${p}.stop`, 'delay');
    if (raw.exit !== undefined) {
      const e = delay(file, raw.exit, `${p}.exit`, 'after', ['code']);
      const code = (raw.exit as Json).code ?? 0;
      if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 255) fail(file, `${p}.exit.code`, 'must be an exit code from 0 to 255');
      stage.exit = { ms: e.ms, jitterMs: e.jitterMs, code };
    }
    return stage;
  }
}

function subset(want: Record<string, string> | undefined, have: Record<string, string> | undefined): boolean {
  return !want || Object.entries(want).every(([k, v]) => have?.[k] === v);
}

/** The first stage whose selector matches, or undefined. */
export function stageFor(stages: readonly PodStage[], s: StageSubject): PodStage | undefined {
  const owner = s.meta.ownerReferences?.find((r) => r.controller)?.kind;
  return stages.find(
    ({ selector: x }) =>
      subset(x.matchLabels, s.meta.labels) &&
      subset(x.matchAnnotations, s.meta.annotations) &&
      (x.namespace === undefined || x.namespace === (s.meta.namespace ?? 'default')) &&
      (x.ownerKind === undefined || x.ownerKind === owner) &&
      (x.container === undefined || x.container === s.container),
  );
}

/** A delay with its jitter drawn. */
export function draw(d: Delay, random: () => number): number {
  return d.ms + (d.jitterMs > 0 ? random() * d.jitterMs : 0);
}
