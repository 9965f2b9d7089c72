// Resource lists as quota counts them (upstream's corev1.ResourceList with its quota helpers): exact
// amounts in nano-units, each remembering the format it was written in, so sums print as upstream
// prints them ("requests.memory=1536Mi", "requests.cpu=1500m").
import { canonicalQuantity, parseQuantityExact, scaledValue, type QuantityFormat } from './quantity.js';

export interface Amount {
  nanos: bigint;
  format: QuantityFormat;
}

export type ResourceList = Map<string, Amount>;

export function count(n: number): Amount {
  return { nanos: BigInt(n) * 1_000_000_000n, format: 'DecimalSI' };
}

/** The amount a quantity names, or undefined when it is malformed (validation reports those). */
export function amountOf(q: unknown): Amount | undefined {
  if (typeof q !== 'string' && typeof q !== 'number') return undefined;
  try {
    return { nanos: scaledValue(q, 9), format: parseQuantityExact(q).format };
  } catch {
    return undefined;
  }
}

export function amountText(a: Amount): string {
  return canonicalQuantity(a.nanos, a.format);
}

/** A list from a JSON map of quantities (spec.hard, a container's requests); malformed entries left out. */
export function resourceList(v: unknown): ResourceList {
  const out: ResourceList = new Map();
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return out;
  for (const [k, q] of Object.entries(v)) {
    const a = amountOf(q);
    if (a) out.set(k, a);
  }
  return out;
}

/** The list as a JSON map, each amount in its canonical spelling. */
export function resourceListJson(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, a] of list) out[k] = amountText(a);
  return out;
}

/** a + b; a sum keeps the first amount's format unless that amount is zero (upstream's Quantity.Add). */
export function plus(a: Amount, b: Amount): Amount {
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) {
    const mine = out.get(k);
    out.set(k, mine ? plus(mine, v) : v);
  }
  return out;
}

/** a - b per resource, never below zero; a resource only b has counts zero. */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) {
    const other = b.get(k);
    const nanos = other ? v.nanos - other.nanos : v.nanos;
    out.set(k, { nanos: nanos < 0n ? 0n : nanos, format: v.format });
  }
  for (const [k, v] of b) if (!a.has(k)) out.set(k, { nanos: 0n, format: v.format });
  return out;
}

/** The larger of a and b per resource (taking that amount's format). */
export function max(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) {
    const mine = out.get(k);
    if (!mine || v.nanos > mine.nanos) out.set(k, v);
  }
  return out;
}

/** Only the resources named. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = new Map();
  for (const n of names) {
    const v = list.get(n);
    if (v) out.set(n, v);
  }
  return out;
}

export function removeZeros(list: ResourceList): ResourceList {
  return new Map([...list].filter(([, v]) => v.nanos !== 0n));
}

export function negativeResources(list: ResourceList): string[] {
  return [...list].filter(([, v]) => v.nanos < 0n).map(([k]) => k);
}

/** The resources where a exceeds b (resources b does not name are not compared). */
export function exceeding(a: ResourceList, b: ResourceList): string[] {
  const out: string[] = [];
  for (const [k, limit] of b) {
    const v = a.get(k);
    if (v && v.nanos > limit.nanos) out.push(k);
  }
  return out;
}

/** `name=amount` pairs sorted by name, comma-joined (upstream's prettyPrint in quota messages). */
export function describeList(list: ResourceList): string {
  return [...list.keys()]
    .sort()
    .map((k) => `${k}=${amountText(list.get(k)!)}`)
    .join(',');
}
