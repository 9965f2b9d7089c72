// Field selectors (?fieldSelector=): "a=b", "a==b", "a!=b" joined by commas, with upstream's
// backslash escaping of '\', ',' and '=' in values. Every kind supports metadata.name and
// metadata.namespace; each ResourceType adds its own fields.
import { badRequest } from './errors.js';
import type { KubeObject } from './types.js';

/** A selectable field's string form for one object; undefined or "" both mean "not set". */
export type FieldGetter = (obj: KubeObject) => string | undefined;

export interface FieldRequirement {
  field: string;
  operator: '=' | '==' | '!=';
  value: string;
}

export interface FieldSelector {
  /** Sorted like upstream (by the raw term text). Empty: matches everything. */
  readonly requirements: readonly FieldRequirement[];
  matches(obj: KubeObject): boolean;
  isEmpty(): boolean;
  toString(): string;
}

export const metadataFieldGetters: Record<string, FieldGetter> = {
  'metadata.name': (o) => o.metadata?.name,
  'metadata.namespace': (o) => o.metadata?.namespace,
};

export function escapeFieldValue(v: string): string {
  return v.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Undoes escapeFieldValue; throws with upstream's message on a bad escape or a bare ',' or '='. */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw new Error(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') throw new Error(`invalid field selector: unescaped character in value: ${c}`);
    else out += c;
  }
  if (inSlash) throw new Error('invalid field selector: invalid escape sequence: \\');
  return out;
}

// Commas split terms unless escaped; the escape itself stays in the term for unescapeFieldValue.
function splitTerms(text: string): string[] {
  if (text.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

function splitTerm(term: string): { lhs: string; op: FieldRequirement['operator']; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

class Selector implements FieldSelector {
  constructor(
    readonly requirements: readonly FieldRequirement[],
    private readonly getters: Record<string, FieldGetter>,
  ) {}
  matches(obj: KubeObject): boolean {
    return this.requirements.every((r) => {
      const actual = this.getters[r.field]?.(obj) ?? '';
      return r.operator === '!=' ? actual !== r.value : actual === r.value;
    });
  }
  isEmpty(): boolean {
    return this.requirements.length === 0;
  }
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeFieldValue(r.value)}`).join(',');
  }
}

/**
 * Parses ?fieldSelector= against the fields a kind supports (metadata.name and metadata.namespace
 * are always added). Throws a 400 BadRequest StatusError: syntax errors first, then
 * `field label not supported: <f>` for the first unknown field.
 */
export function parseFieldSelector(text: string, allowed: Record<string, FieldGetter>): FieldSelector {
  const getters: Record<string, FieldGetter> = { ...metadataFieldGetters, ...allowed };
  const terms = splitTerms(text).sort();
  const reqs: FieldRequirement[] = [];
  try {
    for (const term of terms) {
      if (term === '') continue;
      const parts = splitTerm(term);
      if (!parts) throw new Error(`invalid selector: '${text}'; can't understand '${term}'`);
      reqs.push({ field: parts.lhs, operator: parts.op, value: unescapeFieldValue(parts.rhs) });
    }
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  for (const r of reqs) {
    if (!Object.prototype.hasOwnProperty.call(getters, r.field)) throw badRequest(`field label not supported: ${r.field}`);
  }
  return new Selector(reqs, getters);
}

/** The value an "f=v" / "f==v" term demands of field f, if the selector has one (for index lookups). */
export function exactValue(selector: FieldSelector, fieldName: string): string | undefined {
  for (const r of selector.requirements) {
    if (r.field === fieldName && r.operator !== '!=') return r.value;
  }
  return undefined;
}
