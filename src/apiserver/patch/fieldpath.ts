// Sets of field paths, the currency of field management, with upstream's FieldsV1 encoding:
//   f:<name>        a field or map key
//   k:{"name":"x"}  an element of a keyed list (keys sorted by name)
//   v:"x"           an element of a set
//   i:3             an element of a list by position
//   .               the node itself is in the set (written only when it also has children)
// A path is a list of such encoded elements; the set is a tree whose nodes are members or not.
import { isObject, type JsonObject } from './json.js';

export type PathElement = string;
export type Path = PathElement[];

export class FieldSet {
  member = false;
  readonly children = new Map<PathElement, FieldSet>();

  static fromPaths(paths: Iterable<Path>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: Path): void {
    let node: FieldSet = this;
    for (const pe of path) {
      let next = node.children.get(pe);
      if (!next) {
        next = new FieldSet();
        node.children.set(pe, next);
      }
      node = next;
    }
    node.member = true;
  }

  has(path: Path): boolean {
    const node = this.node(path);
    return node !== undefined && node.member;
  }

  node(path: Path): FieldSet | undefined {
    let node: FieldSet | undefined = this;
    for (const pe of path) {
      node = node.children.get(pe);
      if (!node) return undefined;
    }
    return node;
  }

  isEmpty(): boolean {
    if (this.member) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }

  clone(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [pe, c] of this.children) s.children.set(pe, c.clone());
    return s;
  }

  union(other: FieldSet): FieldSet {
    const s = this.clone();
    s.member ||= other.member;
    for (const [pe, c] of other.children) {
      const mine = s.children.get(pe);
      s.children.set(pe, mine ? mine.union(c) : c.clone());
    }
    return s;
  }

  /** Whether every member of this set is a member of `other`. */
  isSubsetOf(other: FieldSet): boolean {
    if (this.member && !other.member) return false;
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      if (o ? !c.isSubsetOf(o) : !c.isEmpty()) return false;
    }
    return true;
  }

  /** Whether some path is a member of both sets. */
  overlaps(other: FieldSet): boolean {
    if (this.member && other.member) return true;
    const [few, many] = this.children.size <= other.children.size ? [this, other] : [other, this];
    for (const [pe, c] of few.children) {
      const o = many.children.get(pe);
      if (o && c.overlaps(o)) return true;
    }
    return false;
  }

  /** Members of this set that are not members of `other` (exact paths, not subtrees). */
  difference(other: FieldSet): FieldSet {
    const s = new FieldSet();
    s.member = this.member && !other.member;
    for (const [pe, c] of this.children) {
      const theirs = other.children.get(pe);
      const d = theirs ? c.difference(theirs) : c.clone();
      if (!d.isEmpty()) s.children.set(pe, d);
    }
    return s;
  }

  intersection(other: FieldSet): FieldSet {
    const s = new FieldSet();
    s.member = this.member && other.member;
    for (const [pe, c] of this.children) {
      const theirs = other.children.get(pe);
      if (!theirs) continue;
      const i = c.intersection(theirs);
      if (!i.isEmpty()) s.children.set(pe, i);
    }
    return s;
  }

  /** Removes the given paths and everything beneath them. */
  withoutSubtrees(prefixes: FieldSet): FieldSet {
    if (prefixes.member) return new FieldSet();
    const s = new FieldSet();
    s.member = this.member;
    for (const [pe, c] of this.children) {
      const p = prefixes.children.get(pe);
      const kept = p ? c.withoutSubtrees(p) : c.clone();
      if (!kept.isEmpty()) s.children.set(pe, kept);
    }
    return s;
  }

  /** Keeps only the given paths and everything beneath them. */
  onlySubtrees(prefixes: FieldSet): FieldSet {
    if (prefixes.member) return this.clone();
    const s = new FieldSet();
    for (const [pe, c] of this.children) {
      const p = prefixes.children.get(pe);
      if (!p) continue;
      const kept = c.onlySubtrees(p);
      if (!kept.isEmpty()) s.children.set(pe, kept);
    }
    return s;
  }

  /** Member paths in upstream's iteration order: a node's own members first, then its subtrees. */
  paths(): Path[] {
    const out: Path[] = [];
    const walk = (node: FieldSet, prefix: Path) => {
      const entries = sortedChildren(node);
      for (const [pe, c] of entries) if (c.member) out.push([...prefix, pe]);
      for (const [pe, c] of entries) if (c.children.size > 0) walk(c, [...prefix, pe]);
    };
    walk(this, []);
    return out;
  }

  toFieldsV1(): JsonObject {
    return encode(this, false);
  }

  /**
   * `memo`: the tree is a canonical one (frozen, never changed, its subtrees canonical too), so
   * each subtree's set is decoded once and shared by every set decoded from a tree that holds it.
   * Sets are never changed in place once built, which is what makes sharing them safe.
   */
  static fromFieldsV1(fields: unknown, memo?: WeakMap<JsonObject, FieldSet>): FieldSet {
    const s = new FieldSet();
    if (!isObject(fields)) throw new Error('fieldsV1 must be an object');
    decodeInto(s, fields, memo);
    return s;
  }
}

function encode(node: FieldSet, includeSelf: boolean): JsonObject {
  const out: JsonObject = {};
  const children = sortedChildren(node).filter(([, c]) => !c.isEmpty());
  if (includeSelf && node.member && children.length > 0) out['.'] = {};
  for (const [pe, c] of children) out[pe] = encode(c, true);
  return out;
}

function decodeInto(node: FieldSet, fields: JsonObject, memo: WeakMap<JsonObject, FieldSet> | undefined): void {
  for (const [pe, v] of Object.entries(fields)) {
    if (pe === '.') {
      node.member = true;
      continue;
    }
    if (!/^[fkvi]:/.test(pe)) throw new Error(`unknown path element ${JSON.stringify(pe)}`);
    if (!isObject(v)) throw new Error(`value of ${JSON.stringify(pe)} must be an object`);
    node.children.set(pe, memo?.get(v) ?? decodeChild(v, memo));
  }
}

/** A subtree: an empty one is a member leaf, as opposed to an empty whole set. */
function decodeChild(v: JsonObject, memo: WeakMap<JsonObject, FieldSet> | undefined): FieldSet {
  const child = new FieldSet();
  if (Object.keys(v).length === 0) child.member = true;
  else decodeInto(child, v, memo);
  memo?.set(v, child);
  return child;
}

function sortedChildren(node: FieldSet): [PathElement, FieldSet][] {
  const entries = [...node.children.entries()];
  return entries.length > 1 ? entries.sort((a, b) => comparePathElements(a[0], b[0])) : entries;
}

// ---- path elements --------------------------------------------------------------------------

export function fieldElement(name: string): PathElement {
  return `f:${name}`;
}

/** A keyed-list element; key fields sorted by name as upstream serializes them. */
export function keyElement(keys: Record<string, unknown>): PathElement {
  const sorted: JsonObject = {};
  for (const k of Object.keys(keys).sort(compareStrings)) sorted[k] = keys[k];
  return `k:${JSON.stringify(sorted)}`;
}

export function valueElement(v: unknown): PathElement {
  return `v:${JSON.stringify(v)}`;
}

export function indexElement(i: number): PathElement {
  return `i:${i}`;
}

const RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Upstream's total order: fields, then keys, then values, then indexes. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  // Two fields, by far the most common pair: the shared "f:" prefix keeps the names' order.
  if (a.charCodeAt(0) === 102 && b.charCodeAt(0) === 102 && a.charCodeAt(1) === 58 && b.charCodeAt(1) === 58) return a < b ? -1 : a > b ? 1 : 0;
  const ra = RANK[a[0]!] ?? 4;
  const rb = RANK[b[0]!] ?? 4;
  if (ra !== rb) return ra - rb;
  const va = a.slice(2);
  const vb = b.slice(2);
  switch (a[0]) {
    case 'f':
      return compareStrings(va, vb);
    case 'i':
      return Number(va) - Number(vb);
    case 'k':
      return compareKeyLists(parse(va), parse(vb));
    default:
      return compareValues(parse(va), parse(vb));
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareKeyLists(a: unknown, b: unknown): number {
  const ea = isObject(a) ? Object.entries(a) : [];
  const eb = isObject(b) ? Object.entries(b) : [];
  for (let i = 0; ; i++) {
    if (i >= ea.length && i >= eb.length) return 0;
    if (i >= ea.length) return -1;
    if (i >= eb.length) return 1;
    const c = compareStrings(ea[i]![0], eb[i]![0]) || compareValues(ea[i]![1], eb[i]![1]);
    if (c !== 0) return c;
  }
}

/** Orders values across types as upstream does: numbers, strings, booleans, lists, maps, null. */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2 : Array.isArray(v) ? 3 : isObject(v) ? 4 : 5);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  if (isObject(a) && isObject(b)) return compareStrings(JSON.stringify(a), JSON.stringify(b));
  return 0;
}

/** A path as upstream prints it in conflict messages: `.spec.containers[name="web"].image`. */
export function pathString(path: Path): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const keys = parse(body);
          const parts = isObject(keys) ? Object.entries(keys).map(([k, v]) => `${k}=${valueString(v)}`) : [body];
          return `[${parts.join(',')}]`;
        }
        case 'v':
          return `[=${valueString(parse(body))}]`;
        case 'i':
          return `[${body}]`;
        default:
          return '{{invalid path element}}';
      }
    })
    .join('');
}

function valueString(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}
