// The revision history of a DaemonSet or StatefulSet (upstream pkg/controller/history and the
// daemon and statefulset controllers): one ControllerRevision per pod template the workload has
// run, named <workload>-<template hash>, numbered in the order the templates were last current.
// `kubectl rollout history` lists them, and `kubectl rollout undo` patches the workload with a
// revision's data.
//
// A revision's data is the strategic merge patch that puts its template back:
// {"spec":{"template":{"$patch":"replace", ...}}}. The current revision is the one whose data
// equals that patch for the workload's template now; returning to an old template (an undo)
// renumbers its revision as the newest instead of creating another.
import { isStatusError } from '../api/errors.js';
import type { ControllerRevision } from '../api/kinds/controllerrevision.js';
import type { KubeObject, ObjectMeta } from '../api/types.js';
import type { PodTemplateSpec } from '../api/kinds/pod.js';
import { semanticEqual, deepClone } from '../api/kinds/json.js';
import type { LabelSelector } from '../api/labels.js';
import type { Pod } from '../api/kinds/pod.js';
import type { Informer } from '../client/informer.js';
import type { ControllerContext } from '../controller-kit/manager.js';
import { claimObjects, controllerRefTo, objectPath, OwnerIndex, templateHash } from './pod-control.js';

export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
const PREFIX = '/apis/apps/v1';
const RESOURCE = 'controllerrevisions';

/** A workload with a pod template whose history is kept. */
export interface HistoryOwner extends KubeObject {
  metadata: ObjectMeta;
  spec?: { template?: PodTemplateSpec; revisionHistoryLimit?: number };
  status?: { collisionCount?: number };
}

/** Which kind of workload a history belongs to, as ownerReferences and paths name it. */
export interface HistoryKind {
  kind: 'DaemonSet' | 'StatefulSet';
  resource: 'daemonsets' | 'statefulsets';
}

export interface History {
  current: ControllerRevision;
  /** Every other revision the workload owns. */
  old: ControllerRevision[];
}

/** The data a revision of the workload's current template holds. */
export function revisionData(ds: HistoryOwner): Record<string, unknown> {
  return { spec: { template: { $patch: 'replace', ...deepClone(ds.spec?.template ?? {}) } } };
}

function matches(data: Record<string, unknown>, rev: ControllerRevision): boolean {
  return semanticEqual(rev.data, data);
}

function revisionOf(rev: ControllerRevision): number {
  return rev.revision ?? 0;
}

export class RevisionHistory {
  private readonly index: OwnerIndex<ControllerRevision>;

  constructor(
    private readonly ctx: ControllerContext,
    revisions: Informer<ControllerRevision>,
    private readonly owner: HistoryKind,
  ) {
    this.index = new OwnerIndex(revisions);
  }

  /** Finds or makes the current revision; renumbers it when an old template came back. */
  async construct(ds: HistoryOwner, selector: LabelSelector, canAdopt: () => Promise<boolean>, signal: AbortSignal): Promise<History> {
    const ns = ds.metadata.namespace!;
    const claim = await claimObjects<ControllerRevision>({
      client: this.ctx.client,
      owner: ds,
      ownerRef: controllerRefTo(ds, 'apps/v1', this.owner.kind),
      selector,
      prefix: PREFIX,
      resource: RESOURCE,
      candidates: [...this.index.owned(ds.metadata.uid), ...this.index.orphansIn(ns)],
      canAdopt,
      log: this.ctx.log,
      signal,
    });
    if (claim.errors.length > 0) throw claim.errors[0];
    const current: ControllerRevision[] = [];
    const old: ControllerRevision[] = [];
    const data = revisionData(ds);
    for (const rev of claim.claimed) (matches(data, rev) ? current : old).push(rev);
    const next = old.reduce((max, r) => Math.max(max, revisionOf(r)), 0) + 1;
    if (current.length === 0) return { current: await this.snapshot(ds, next, signal), old };
    // Two revisions of one template (a hash collision resolved late): keep the newest.
    current.sort((a, b) => revisionOf(b) - revisionOf(a));
    for (const dup of current.slice(1)) await this.remove(dup, signal);
    let cur = current[0]!;
    if (revisionOf(cur) < next) {
      cur = await this.ctx.client.patch<ControllerRevision>(objectPath(PREFIX, RESOURCE, ns, cur.metadata.name!), { revision: next, metadata: { resourceVersion: cur.metadata.resourceVersion } }, 'merge', { signal });
      this.ctx.log.info({ [this.owner.kind.toLowerCase()]: `${ns}/${ds.metadata.name}`, revision: next, name: cur.metadata.name }, 'an earlier template is current again: its revision is now the newest');
    }
    return { current: cur, old };
  }

  /** Deletes the oldest revisions beyond spec.revisionHistoryLimit that no pod still runs. */
  async cleanup(ds: HistoryOwner, old: ControllerRevision[], pods: Pod[], signal: AbortSignal): Promise<void> {
    let excess = old.length - (ds.spec?.revisionHistoryLimit ?? 10);
    if (excess <= 0) return;
    const live = new Set(pods.map((p) => p.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]).filter((h) => h !== undefined));
    for (const rev of [...old].sort((a, b) => revisionOf(a) - revisionOf(b))) {
      if (excess <= 0) break;
      // DaemonSet pods carry the revision's hash, StatefulSet pods its name: either keeps it.
      if (live.has(rev.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '') || live.has(rev.metadata.name!)) continue;
      await this.remove(rev, signal);
      excess--;
    }
  }

  private async snapshot(ds: HistoryOwner, revision: number, signal: AbortSignal): Promise<ControllerRevision> {
    const ns = ds.metadata.namespace!;
    const hash = templateHash(ds.spec?.template, ds.status?.collisionCount);
    const name = `${ds.metadata.name}-${hash}`;
    const rev: ControllerRevision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ns,
        labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: hash },
        ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
        ownerReferences: [controllerRefTo(ds, 'apps/v1', this.owner.kind)],
      },
      data: revisionData(ds),
      revision,
    };
    try {
      const created = await this.ctx.client.create<ControllerRevision>(objectPath(PREFIX, RESOURCE, ns), rev, { signal });
      this.ctx.log.info({ [this.owner.kind.toLowerCase()]: `${ns}/${ds.metadata.name}`, revision, name }, 'new revision');
      return created;
    } catch (e) {
      if (!isStatusError(e, 'AlreadyExists')) throw e;
    }
    const existing = await this.ctx.client.get<ControllerRevision>(objectPath(PREFIX, RESOURCE, ns, name), { signal });
    if (matches(revisionData(ds), existing)) return existing;
    // Another template has this name: count a collision, which changes the hash, and try again.
    const fresh = await this.ctx.client.get<HistoryOwner>(objectPath(PREFIX, this.owner.resource, ns, ds.metadata.name!), { signal });
    if ((fresh.status?.collisionCount ?? 0) !== (ds.status?.collisionCount ?? 0)) {
      throw new Error(`${this.owner.kind.toLowerCase()} ${ns}/${ds.metadata.name}: stale collisionCount, retrying once the cache catches up`);
    }
    const collisionCount = (fresh.status?.collisionCount ?? 0) + 1;
    await this.ctx.client.patch(`${objectPath(PREFIX, this.owner.resource, ns, ds.metadata.name!)}/status`, { status: { collisionCount }, metadata: { resourceVersion: fresh.metadata.resourceVersion } }, 'merge', { signal });
    this.ctx.log.info({ [this.owner.kind.toLowerCase()]: `${ns}/${ds.metadata.name}`, collisionCount, name }, 'revision name taken by another template: collisionCount raised');
    throw new Error(`${this.owner.kind.toLowerCase()} ${ns}/${ds.metadata.name}: revision ${name} belongs to another template; collisionCount is now ${collisionCount}`);
  }

  private async remove(rev: ControllerRevision, signal: AbortSignal): Promise<void> {
    try {
      await this.ctx.client.delete(objectPath(PREFIX, RESOURCE, rev.metadata.namespace!, rev.metadata.name!), { preconditions: { uid: rev.metadata.uid } }, { signal });
    } catch (e) {
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}
