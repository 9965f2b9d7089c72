// The quota arithmetic both sides share: the admission check (would this write fit every quota that
// covers it, and what would each quota have used after it) and the controller's recount of a
// namespace. Upstream's CheckRequest and CalculateUsage, with their messages.
import { obj } from '../kinds/json.js';
import { add, describeList, exceeding, mask, negativeResources, removeZeros, resourceList, subtractNonNegative, type ResourceList } from '../resource-list.js';
import type { KubeObject } from '../types.js';
import type { QuotaEvaluator, QuotaOperation } from './evaluators.js';
import { scopeRequirementsOf, type ScopeRequirement } from './scopes.js';

/** A quota as admission reads it: what its status says is allowed and used. */
export interface QuotaView {
  name: string;
  hard: ResourceList;
  used: ResourceList;
  scopes: ScopeRequirement[];
}

export function quotaView(quota: KubeObject): QuotaView {
  const status = obj(quota.status);
  return { name: quota.metadata.name ?? '', hard: resourceList(status.hard), used: resourceList(status.used), scopes: scopeRequirementsOf(quota) };
}

export interface QuotaRequest {
  operation: QuotaOperation;
  subresource: string;
  object: KubeObject;
  oldObject: KubeObject | undefined;
}

/** A write refused by quota; the message is upstream's, the caller makes it a 403. */
export class QuotaRefusal extends Error {}

/** Whether a quota covers an object: it limits something the evaluator counts, and every scope holds. */
export function quotaCovers(ev: QuotaEvaluator, hard: readonly string[], scopes: readonly ScopeRequirement[], object: KubeObject): boolean {
  return ev.matchingResources(hard).length > 0 && scopes.every((s) => ev.matchesScope(s, object));
}

/**
 * What each quota would have used after the write (undefined where the write changes nothing),
 * or a QuotaRefusal thrown when the write does not fit.
 */
export function checkRequest(quotas: readonly QuotaView[], req: QuotaRequest, ev: QuotaEvaluator, nowMs: number): (ResourceList | undefined)[] {
  const out: (ResourceList | undefined)[] = quotas.map(() => undefined);
  const interesting: number[] = [];
  quotas.forEach((q, i) => {
    const hard = [...q.hard.keys()];
    if (!quotaCovers(ev, hard, q.scopes, req.object)) return;
    const restricted = ev.matchingResources(hard);
    const why = ev.constraints(restricted, req.object);
    if (why) throw new QuotaRefusal(`failed quota: ${q.name}: ${why}`);
    // A quota the controller has not counted yet cannot say whether the write fits.
    if (restricted.some((r) => !q.used.has(r))) throw new QuotaRefusal(`status unknown for quota: ${q.name}, resources: ${[...restricted].sort().join(',')}`);
    interesting.push(i);
  });
  if (interesting.length === 0) return out;
  const input = ev.usage(req.object, nowMs);
  const negative = negativeResources(input);
  if (negative.length > 0) throw new QuotaRefusal(`quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  const deltas = new Map<number, ResourceList>(interesting.map((i) => [i, input]));
  if (req.operation === 'UPDATE') {
    const old = req.oldObject;
    if (!old) throw new QuotaRefusal('unable to get previous usage since prior version of object was not found');
    // An update is charged what it adds; a quota that did not cover the old object is charged all of it.
    if (old.metadata.resourceVersion) {
      const delta = subtractNonNegative(input, ev.usage(old, nowMs));
      for (const i of interesting) if (quotaCovers(ev, [...quotas[i]!.hard.keys()], quotas[i]!.scopes, old)) deltas.set(i, delta);
    }
  }
  for (const i of interesting) {
    const q = quotas[i]!;
    const requested = mask(removeZeros(deltas.get(i)!), q.hard.keys());
    if (requested.size === 0) continue;
    const used = add(q.used, requested);
    // A status write (a resize the driver reports) is charged but never refused.
    if (req.subresource !== 'status') {
      const over = exceeding(mask(used, requested.keys()), q.hard);
      if (over.length > 0) {
        throw new QuotaRefusal(
          `exceeded quota: ${q.name}, requested: ${describeList(mask(requested, over))}, used: ${describeList(mask(q.used, over))}, limited: ${describeList(mask(q.hard, over))}`,
        );
      }
    }
    out[i] = used;
  }
  return out;
}

/** A namespace's usage of the resources `hard` names, counted over its objects of one evaluator's kind. */
export function usageOf(ev: QuotaEvaluator, hard: readonly string[], scopes: readonly ScopeRequirement[], objects: Iterable<KubeObject>, nowMs: number): ResourceList {
  const counted = ev.matchingResources(hard);
  let used: ResourceList = new Map(counted.map((r) => [r, { nanos: 0n, format: 'DecimalSI' as const }]));
  for (const o of objects) {
    if (!scopes.every((s) => ev.matchesScope(s, o))) continue;
    used = add(used, mask(ev.usage(o, nowMs), counted));
  }
  return used;
}
