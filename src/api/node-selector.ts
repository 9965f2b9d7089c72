// Node selector terms (pod.spec.affinity.nodeAffinity), compiled once per pod into plain
// predicates so matching a thousand nodes costs a few string comparisons each.
import type { Labels } from './types.js';

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] };
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
}

/** Whether a node (its labels and name) satisfies a term. */
export type NodeMatcher = (labels: Labels, nodeName: string) => boolean;

const never: NodeMatcher = () => false;

function parseInteger(s: string | undefined): number | undefined {
  return s !== undefined && /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
}

type ValueTest = (value: string | undefined) => boolean;

/** One requirement as a test on the value of its key (undefined when the key is absent); undefined if malformed. */
function compileRequirement(r: NodeSelectorRequirement): ValueTest | undefined {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': {
      if (values.length === 0) return undefined;
      const set = new Set(values);
      return (v) => v !== undefined && set.has(v);
    }
    case 'NotIn': {
      if (values.length === 0) return undefined;
      const set = new Set(values);
      return (v) => v === undefined || !set.has(v);
    }
    case 'Exists':
      return values.length === 0 ? (v) => v !== undefined : undefined;
    case 'DoesNotExist':
      return values.length === 0 ? (v) => v === undefined : undefined;
    case 'Gt':
    case 'Lt': {
      const bound = values.length === 1 ? parseInteger(values[0]) : undefined;
      if (bound === undefined) return undefined;
      const gt = r.operator === 'Gt';
      return (v) => {
        const n = parseInteger(v);
        return n !== undefined && (gt ? n > bound : n < bound);
      };
    }
    default:
      return undefined;
  }
}

/**
 * Upstream semantics: expressions and fields are ANDed; a term with neither matches nothing; a
 * malformed term (bad operator or values, a field other than metadata.name) matches nothing.
 */
export function compileTerm(term: NodeSelectorTerm | undefined): NodeMatcher {
  const exprs = term?.matchExpressions ?? [];
  const fields = term?.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return never;
  const labelTests: [string, ValueTest][] = [];
  for (const r of exprs) {
    const t = compileRequirement(r);
    if (!t) return never;
    labelTests.push([r.key, t]);
  }
  const nameTests: ValueTest[] = [];
  for (const r of fields) {
    if (r.key !== 'metadata.name' || (r.operator !== 'In' && r.operator !== 'NotIn')) return never;
    const t = compileRequirement(r);
    if (!t) return never;
    nameTests.push(t);
  }
  return (labels, nodeName) => {
    for (const [key, test] of labelTests) if (!test(Object.prototype.hasOwnProperty.call(labels, key) ? labels[key] : undefined)) return false;
    for (const test of nameTests) if (!test(nodeName)) return false;
    return true;
  };
}

/** Terms are ORed; no terms at all matches nothing (validation requires at least one). */
export function compileTerms(terms: NodeSelectorTerm[] | undefined): NodeMatcher {
  const matchers = (terms ?? []).map(compileTerm);
  if (matchers.length === 0) return never;
  if (matchers.length === 1) return matchers[0]!;
  return (labels, name) => matchers.some((m) => m(labels, name));
}
