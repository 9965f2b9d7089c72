// Resource arithmetic for scheduling: what a pod asks for and what a node offers, as plain numbers
// (millicores, bytes, counts) so filtering a thousand nodes per pod is cheap arithmetic.
import { integerValue, milliValue } from '../api/quantity.js';
import type { Container, Pod } from '../api/kinds/pod.js';
import type { Node } from '../api/kinds/node.js';

export interface Resources {
  milliCpu: number;
  /** Bytes. */
  memory: number;
  /** Bytes. */
  ephemeralStorage: number;
  /** Extended resources, hugepages and anything else countable, by name. */
  scalar: Map<string, number>;
}

export function emptyResources(): Resources {
  return { milliCpu: 0, memory: 0, ephemeralStorage: 0, scalar: new Map() };
}

/** Upstream's defaults for a container that requests no cpu/memory, used only for scoring. */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

// The same few quantity strings ("100m", "128Mi") appear on thousands of pods; parsing them is
// exact bigint arithmetic, so remember the answers.
const milliMemo = new Map<string, number>();
const valueMemo = new Map<string, number>();

function memo(m: Map<string, number>, q: unknown, parse: (s: string | number) => number): number {
  if (typeof q === 'number') return parse(q);
  if (typeof q !== 'string') return 0;
  let v = m.get(q);
  if (v === undefined) {
    try {
      v = parse(q);
    } catch {
      // Validation rejects malformed quantities; count one that slipped through as nothing.
      v = 0;
    }
    if (m.size > 10_000) m.clear();
    m.set(q, v);
  }
  return v;
}

export function cpuMillis(q: unknown): number {
  return memo(milliMemo, q, milliValue);
}

export function quantityValue(q: unknown): number {
  return memo(valueMemo, q, integerValue);
}

function addList(into: Resources, list: Record<string, unknown> | undefined, sign = 1): void {
  if (!list) return;
  for (const name in list) {
    const q = list[name];
    switch (name) {
      case 'cpu':
        into.milliCpu += sign * cpuMillis(q);
        break;
      case 'memory':
        into.memory += sign * quantityValue(q);
        break;
      case 'ephemeral-storage':
        into.ephemeralStorage += sign * quantityValue(q);
        break;
      case 'pods':
        break;
      default:
        into.scalar.set(name, (into.scalar.get(name) ?? 0) + sign * quantityValue(q));
    }
  }
}

export function addResources(into: Resources, r: Resources, sign = 1): void {
  into.milliCpu += sign * r.milliCpu;
  into.memory += sign * r.memory;
  into.ephemeralStorage += sign * r.ephemeralStorage;
  for (const [k, v] of r.scalar) {
    const next = (into.scalar.get(k) ?? 0) + sign * v;
    if (next === 0) into.scalar.delete(k);
    else into.scalar.set(k, next);
  }
}

function maxInto(into: Resources, r: Resources): void {
  into.milliCpu = Math.max(into.milliCpu, r.milliCpu);
  into.memory = Math.max(into.memory, r.memory);
  into.ephemeralStorage = Math.max(into.ephemeralStorage, r.ephemeralStorage);
  for (const [k, v] of r.scalar) into.scalar.set(k, Math.max(into.scalar.get(k) ?? 0, v));
}

function copy(r: Resources): Resources {
  return { milliCpu: r.milliCpu, memory: r.memory, ephemeralStorage: r.ephemeralStorage, scalar: new Map(r.scalar) };
}

type RequestsOf = (c: Container) => Resources;

const requestsOf: RequestsOf = (c) => {
  const r = emptyResources();
  addList(r, c.resources?.requests);
  return r;
};

/** Like requestsOf, but a container that names no cpu/memory request counts upstream's defaults. */
const nonZeroRequestsOf: RequestsOf = (c) => {
  const r = requestsOf(c);
  const req = c.resources?.requests;
  if (req?.cpu === undefined) r.milliCpu = DEFAULT_MILLI_CPU_REQUEST;
  if (req?.memory === undefined) r.memory = DEFAULT_MEMORY_REQUEST;
  return r;
};

/**
 * Upstream's effective pod request: app containers and sidecars (restartable init containers) run
 * together; a regular init container runs alone beside the sidecars started before it; the pod needs
 * the larger of the two phases, plus its runtime overhead.
 */
function effectiveRequests(pod: Pod, of: RequestsOf): Resources {
  const spec = pod.spec;
  const reqs = emptyResources();
  for (const c of spec?.containers ?? []) addResources(reqs, of(c));
  const sidecars = emptyResources();
  const initPeak = emptyResources();
  for (const c of spec?.initContainers ?? []) {
    const r = of(c);
    if (c.restartPolicy === 'Always') {
      addResources(reqs, r);
      addResources(sidecars, r);
      maxInto(initPeak, sidecars);
    } else {
      const phase = copy(r);
      addResources(phase, sidecars);
      maxInto(initPeak, phase);
    }
  }
  maxInto(reqs, initPeak);
  addList(reqs, (spec as { overhead?: Record<string, unknown> } | undefined)?.overhead);
  return reqs;
}

export function podRequests(pod: Pod): Resources {
  return effectiveRequests(pod, requestsOf);
}

/** Requests with defaults for unset cpu/memory, so scoring still spreads best-effort pods. */
export function podNonZeroRequests(pod: Pod): { milliCpu: number; memory: number } {
  const r = effectiveRequests(pod, nonZeroRequestsOf);
  return { milliCpu: r.milliCpu, memory: r.memory };
}

export interface Allocatable extends Resources {
  pods: number;
}

export function nodeAllocatable(node: Node): Allocatable {
  const r = emptyResources();
  const list = node.status?.allocatable ?? node.status?.capacity;
  addList(r, list);
  // A node that reports no pod capacity takes no pods, as upstream (AllowedPodNumber 0).
  // Spelled out rather than spread: object spread gives these objects varying hidden classes, and
  // the filter reading them for every node then runs several times slower.
  return { milliCpu: r.milliCpu, memory: r.memory, ephemeralStorage: r.ephemeralStorage, scalar: r.scalar, pods: list?.pods !== undefined ? quantityValue(list.pods) : 0 };
}

export function isZero(r: Resources): boolean {
  if (r.milliCpu !== 0 || r.memory !== 0 || r.ephemeralStorage !== 0) return false;
  for (const v of r.scalar.values()) if (v !== 0) return false;
  return true;
}
