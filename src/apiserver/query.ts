// Query parameters of resource requests, parsed and checked once.
import { badRequest } from '../api/errors.js';
import type { FieldValidation } from './request-context.js';
import type { DeleteOptions } from './object-store.js';
import { optionalQueryBool } from '../api/query-params.js';

export function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be an integer`);
  return Number(v);
}


export function fieldValidationParam(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got ${JSON.stringify(v)}`);
}

export function dryRunParam(q: URLSearchParams): boolean {
  const values = q.getAll('dryRun');
  for (const v of values) if (v !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
  return values.length > 0;
}

const POLICIES = ['Orphan', 'Background', 'Foreground'] as const;

/** DeleteOptions from the query and/or a JSON body (kubectl sends {"propagationPolicy":"Background"}). */
export function deleteOptions(q: URLSearchParams, body: Record<string, unknown> | undefined): DeleteOptions & { dryRun: boolean } {
  const out: DeleteOptions & { dryRun: boolean } = { dryRun: dryRunParam(q) };
  const grace = intParam(q, 'gracePeriodSeconds') ?? (typeof body?.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
  if (grace !== undefined) {
    if (grace < 0) throw badRequest('gracePeriodSeconds: Invalid value: must be greater than or equal to 0');
    out.gracePeriodSeconds = grace;
  }
  let policy = q.get('propagationPolicy') ?? (typeof body?.propagationPolicy === 'string' ? body.propagationPolicy : undefined);
  const orphan = optionalQueryBool(q, 'orphanDependents') ?? (typeof body?.orphanDependents === 'boolean' ? body.orphanDependents : undefined);
  if (!policy && orphan !== undefined) policy = orphan ? 'Orphan' : 'Background';
  if (policy) {
    if (!(POLICIES as readonly string[]).includes(policy)) {
      throw badRequest(`propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`);
    }
    out.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  }
  const pre = body?.preconditions as { uid?: unknown; resourceVersion?: unknown } | undefined;
  if (pre && typeof pre === 'object') {
    out.preconditions = {};
    if (typeof pre.uid === 'string') out.preconditions.uid = pre.uid;
    if (typeof pre.resourceVersion === 'string') out.preconditions.resourceVersion = pre.resourceVersion;
  }
  if (Array.isArray(body?.dryRun) && (body.dryRun as unknown[]).includes('All')) out.dryRun = true;
  return out;
}
