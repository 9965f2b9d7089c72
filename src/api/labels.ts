// Label selectors: the string syntax of ?labelSelector= (parsed like upstream's labels.Parse, with
// its error texts) and the structured metav1.LabelSelector ({matchLabels, matchExpressions}).
import { badRequest, field } from './errors.js';
import type { Labels, StatusCause } from './types.js';
import { arr, isObject, obj, str, strMap } from './kinds/json.js';
import { childPath, indexPath, isQualifiedName, isValidLabelValue, validateLabelName, validateLabels } from './validation.js';

/** Upstream selection.Operator values. */
export type SelectorOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: SelectorOperator;
  values: string[];
}

export interface LabelSelector {
  /** Sorted by key. Empty for a selector that matches everything (or, with `nothing`, nothing). */
  readonly requirements: readonly LabelRequirement[];
  /** True for the selector of an absent metav1.LabelSelector, which matches no object. */
  readonly nothing: boolean;
  matches(labels: Labels | undefined): boolean;
  /** True when it does not restrict anything. */
  isEmpty(): boolean;
  /** Canonical string form, e.g. "app=web,tier in (a,b)". */
  toString(): string;
  /** The value a "k=v", "k==v" or "k in (v)" requirement on `key` demands, if any. */
  requiresExactMatch(key: string): string | undefined;
}

/** metav1.LabelSelector as JSON. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

class Selector implements LabelSelector {
  constructor(
    readonly requirements: readonly LabelRequirement[],
    readonly nothing = false,
  ) {}
  matches(labels: Labels | undefined): boolean {
    if (this.nothing) return false;
    const ls = labels ?? {};
    return this.requirements.every((r) => requirementMatches(r, ls));
  }
  isEmpty(): boolean {
    return !this.nothing && this.requirements.length === 0;
  }
  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
  requiresExactMatch(key: string): string | undefined {
    for (const r of this.requirements) {
      if (r.key !== key) continue;
      if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
      return undefined;
    }
    return undefined;
  }
}

export const everything: LabelSelector = new Selector([]);
export const nothing: LabelSelector = new Selector([], true);

function has(labels: Labels, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key) && typeof labels[key] === 'string';
}

function requirementMatches(r: LabelRequirement, labels: Labels): boolean {
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has(labels, r.key) && r.values.includes(labels[r.key]!);
    case 'notin':
    case '!=':
      return !has(labels, r.key) || !r.values.includes(labels[r.key]!);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!has(labels, r.key) || r.values.length !== 1) return false;
      const lv = parseInt64(labels[r.key]!);
      const rv = parseInt64(r.values[0]!);
      if (lv === undefined || rv === undefined) return false;
      return r.operator === 'gt' ? lv > rv : lv < rv;
    }
  }
}

function parseInt64(s: string): bigint | undefined {
  return /^[+-]?\d+$/.test(s) ? BigInt(s) : undefined;
}

function requirementString(r: LabelRequirement): string {
  let out = r.operator === '!' ? `!${r.key}` : r.key;
  switch (r.operator) {
    case 'exists':
    case '!':
      return out;
    case 'in':
      out += ' in ';
      break;
    case 'notin':
      out += ' notin ';
      break;
    case 'gt':
      out += '>';
      break;
    case 'lt':
      out += '<';
      break;
    default:
      out += r.operator;
  }
  const values = r.values.length === 1 ? r.values[0]! : [...r.values].sort().join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${out}(${values})` : out + values;
}

function sortedByKey(reqs: LabelRequirement[]): LabelRequirement[] {
  return [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Builds a requirement the way upstream's NewRequirement checks it. Errors are rendered as upstream's
 * field errors would print (`values[0][key]: Invalid value: ...`), joined like an aggregate.
 */
function newRequirement(key: string, operator: SelectorOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) errs.push(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrs.join('; ')}`);
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(`values: Invalid value: ${goSlice(values)}: for 'in', 'notin' operators, values set can't be empty`);
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(`values: Invalid value: ${goSlice(values)}: exact-match compatibility requires one single value`);
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(`values: Invalid value: ${goSlice(values)}: values set must be empty for exists and does not exist`);
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(`values: Invalid value: ${goSlice(values)}: for 'Gt', 'Lt' operators, exactly one value is required`);
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(`values[${i}]: Invalid value: ${JSON.stringify(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
      });
      break;
  }
  values.forEach((v, i) => {
    const vErrs = isValidLabelValue(v);
    if (vErrs.length) errs.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${vErrs.join('; ')}`);
  });
  if (errs.length === 1) throw new Error(errs[0]);
  if (errs.length > 1) throw new Error(`[${errs.join(', ')}]`);
  return { key, operator, values };
}

function goSlice(values: string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

// ---------------------------------------------------------------------------------------------
// String syntax: a lexer and recursive-descent parser with upstream's tokens and messages.

type Tok = 'error' | 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

const TOKENS: Record<string, Tok> = { ')': ')', ',': ',', '!': '!', '==': '==', '=': '=', '>': '>', in: 'in', '<': '<', '!=': '!=', notin: 'notin', '(': '(' };
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}
function isSpecial(ch: string): boolean {
  return '=!(),><'.includes(ch);
}

function lex(s: string): { tok: Tok; lit: string }[] {
  const items: { tok: Tok; lit: string }[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++;
    if (pos >= s.length) {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    if (isSpecial(s[pos]!)) {
      // Longest run of special characters that still forms a known operator.
      let buf = '';
      let last: { tok: Tok; lit: string } | undefined;
      while (pos < s.length && isSpecial(s[pos]!)) {
        buf += s[pos]!;
        const t = TOKENS[buf];
        if (t) {
          last = { tok: t, lit: buf };
          pos++;
        } else if (last) {
          break;
        } else {
          pos++;
        }
      }
      items.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
      continue;
    }
    let buf = '';
    while (pos < s.length && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) buf += s[pos++]!;
    const t = TOKENS[buf];
    items.push({ tok: t ?? 'id', lit: buf });
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly items: { tok: Tok; lit: string }[]) {}

  // In value position the keywords "in" and "notin" are plain identifiers.
  private look(values: boolean): { tok: Tok; lit: string } {
    const it = this.items[Math.min(this.pos, this.items.length - 1)]!;
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }
  private next(values: boolean): { tok: Tok; lit: string } {
    const it = this.look(values);
    this.pos++;
    return it;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.look(true);
      if (tok === 'id' || tok === '!') {
        let r: LabelRequirement;
        try {
          r = this.requirement();
        } catch (e) {
          throw new Error(`unable to parse requirement: ${(e as Error).message}`);
        }
        reqs.push(r);
        const after = this.next(true);
        if (after.tok === 'eos') return reqs;
        if (after.tok === ',') {
          const n = this.look(true);
          if (n.tok !== 'id' && n.tok !== '!') throw new Error(`found '${n.lit}', expected: identifier after ','`);
          continue;
        }
        throw new Error(`found '${after.lit}', expected: ',' or 'end of string'`);
      }
      if (tok === 'eos') return reqs;
      throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private requirement(): LabelRequirement {
    let { tok, lit } = this.next(true);
    let op: SelectorOperator | undefined;
    if (tok === '!') {
      op = '!';
      ({ tok, lit } = this.next(true));
    }
    if (tok !== 'id') throw new Error(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    if (keyErrs.length) throw new Error(`<nil>: Invalid value: ${JSON.stringify(lit)}: ${keyErrs.join('; ')}`);
    const key = lit;
    const t = this.look(true).tok;
    if (op !== '!' && (t === 'eos' || t === ',')) op = 'exists';
    if (op === 'exists' || op === '!') return newRequirement(key, op, []);

    const o = this.next(false);
    let operator: SelectorOperator;
    switch (o.tok) {
      case 'in':
        operator = 'in';
        break;
      case 'notin':
        operator = 'notin';
        break;
      case '=':
        operator = '=';
        break;
      case '==':
        operator = '==';
        break;
      case '!=':
        operator = '!=';
        break;
      case '>':
        operator = 'gt';
        break;
      case '<':
        operator = 'lt';
        break;
      default:
        throw new Error(`found '${o.lit}', expected: ${BINARY_OPERATORS}`);
    }
    const values = operator === 'in' || operator === 'notin' ? this.valueSet() : this.exactValue();
    // Upstream collects values in a set: deduplicated and sorted.
    return newRequirement(key, operator, [...new Set(values)].sort());
  }

  private valueSet(): string[] {
    const open = this.next(true);
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.look(true);
    if (tok === 'id' || tok === ',') {
      const s = this.identifiers();
      if (this.next(true).tok !== ')') throw new Error(`found '${lit}', expected: ')'`);
      return s;
    }
    if (tok === ')') {
      this.next(true);
      return [''];
    }
    throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private identifiers(): string[] {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.next(true);
      if (tok === 'id') {
        s.add(lit);
        const n = this.look(true);
        if (n.tok === ',') continue;
        if (n.tok === ')') return [...s];
        throw new Error(`found '${n.lit}', expected: ',' or ')'`);
      }
      if (tok === ',') {
        // Empty elements ("(,a)", "(a,)", "(a,,b)") stand for the empty value.
        if (s.size === 0) s.add('');
        const n = this.look(true);
        if (n.tok === ')') {
          s.add('');
          return [...s];
        }
        if (n.tok === ',') s.add('');
        continue;
      }
      throw new Error(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private exactValue(): string[] {
    const t = this.look(true).tok;
    if (t === 'eos' || t === ',') return [''];
    const { tok, lit } = this.next(true);
    if (tok === 'id') return [lit];
    throw new Error(`found '${lit}', expected: identifier`);
  }
}

/** Parses ?labelSelector=; throws a 400 BadRequest StatusError with upstream's message on bad input. */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    return new Selector(sortedByKey(new Parser(lex(text)).parse()));
  } catch (e) {
    throw badRequest((e as Error).message);
  }
}

/** A selector requiring exactly the given labels (what a Service's spec.selector means). */
export function selectorFromSet(set: Record<string, string> | undefined): LabelSelector {
  const reqs = Object.entries(set ?? {}).map(([key, v]) => ({ key, operator: '=' as const, values: [v] }));
  return new Selector(sortedByKey(reqs));
}

// ---------------------------------------------------------------------------------------------
// Structured selectors (metav1.LabelSelector).

const EXPRESSION_OPERATORS: Record<string, SelectorOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * Upstream LabelSelectorAsSelector: an absent selector selects nothing, an empty one everything.
 * Throws an Error with upstream's message when the selector is malformed.
 */
export function labelSelectorFromObject(sel: unknown): LabelSelector {
  if (sel === undefined || sel === null) return nothing;
  const s = obj(sel);
  const ml = strMap(s.matchLabels);
  const exprs = arr(s.matchExpressions);
  if (Object.keys(ml).length + exprs.length === 0) return everything;
  const reqs: LabelRequirement[] = [];
  for (const [k, v] of Object.entries(ml)) reqs.push(newRequirement(k, '=', [v]));
  for (const e of exprs) {
    const expr = obj(e);
    const op = EXPRESSION_OPERATORS[str(expr.operator)];
    if (!op) throw new Error(`${JSON.stringify(str(expr.operator))} is not a valid label selector operator`);
    reqs.push(newRequirement(str(expr.key), op, arr(expr.values).map(str)));
  }
  return new Selector(sortedByKey(reqs));
}

/** Whether labels match a structured selector; a malformed selector matches nothing. */
export function matchLabelSelectorObject(sel: unknown, labels: Labels | undefined): boolean {
  try {
    return labelSelectorFromObject(sel).matches(labels);
  } catch {
    return false;
  }
}

/** The string form of a structured selector (Scale's status.selector, e.g. "app=web"); "" if absent or malformed. */
export function selectorObjectToString(sel: unknown): string {
  try {
    return labelSelectorFromObject(sel).toString();
  } catch {
    return '';
  }
}

/** Upstream ValidateLabelSelector (label values in expressions are checked too). */
export function validateLabelSelectorObject(sel: unknown, path: string): StatusCause[] {
  if (sel === undefined || sel === null) return [];
  if (!isObject(sel)) return [field.typeInvalid(path, sel, 'must be a label selector object')];
  const out: StatusCause[] = [...validateLabels(sel.matchLabels, childPath(path, 'matchLabels'))];
  arr(sel.matchExpressions).forEach((e, i) => {
    const expr = obj(e);
    const p = indexPath(childPath(path, 'matchExpressions'), i);
    const values = arr(expr.values).map(str);
    const operator = str(expr.operator);
    switch (operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) out.push(field.required(childPath(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) out.push(field.forbidden(childPath(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        out.push(field.invalid(childPath(p, 'operator'), operator, 'not a valid selector operator'));
    }
    out.push(...validateLabelName(str(expr.key), childPath(p, 'key')));
    values.forEach((v, vi) => {
      out.push(...isValidLabelValue(v).map((m) => field.invalid(indexPath(childPath(p, 'values'), vi), v, m)));
    });
  });
  return out;
}

