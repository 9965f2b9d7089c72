// Registration (N1) and the identity check (N4): create the Node, or adopt an existing one — but
// only when it is ours (same skiff.dev/machine-id) or its owner is gone (its Lease has expired).
import type { Lease } from '../api/kinds/lease.js';
import { isStatusError } from '../api/errors.js';
import { labelsNodeMayNotSet } from '../api/node-labels.js';
import type { Node } from '../api/kinds/node.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi, MACHINE_ID_ANNOTATION, isAlreadyExists, isNotFound, leasePath, nodePath } from './api.js';
import { defaultLabels, type NodeConfig } from './node-object.js';

/** N4: the name is held by a live agent on another machine. Not retried: the operator must act. */
export class NodeNameTakenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeNameTakenError';
  }
}

/** Whether a Lease was renewed within its duration, as of now. */
export function leaseIsLive(lease: Lease | undefined, now: number): boolean {
  const renew = lease?.spec?.renewTime ?? lease?.spec?.acquireTime;
  if (!renew) return false;
  const duration = (lease?.spec?.leaseDurationSeconds ?? 40) * 1000;
  return Date.parse(renew) + duration > now;
}

/**
 * The N4 decision for an existing Node: undefined when this machine may adopt it, otherwise the
 * error to refuse with. The Lease is read live by the caller.
 */
export function adoptionRefusal(existing: Node, lease: Lease | undefined, machineId: string, now: number): NodeNameTakenError | undefined {
  const theirs = existing.metadata.annotations?.[MACHINE_ID_ANNOTATION];
  if (!theirs || theirs === machineId) return undefined;
  if (!leaseIsLive(lease, now)) return undefined;
  const renewedAgo = Math.max(0, Math.round((now - Date.parse(lease!.spec!.renewTime ?? lease!.spec!.acquireTime!)) / 1000));
  const name = existing.metadata.name;
  return new NodeNameTakenError(
    `node "${name}" belongs to another machine (${MACHINE_ID_ANNOTATION} ${theirs}; this machine is ${machineId}) ` +
      `whose agent renewed its Lease ${renewedAgo}s ago; refusing to adopt it. ` +
      `Stop that agent (or wait ${lease!.spec!.leaseDurationSeconds ?? 40}s after it stopped), or give this one another --node-name.`,
  );
}

export interface RegisterResult {
  node: Node;
  created: boolean;
  adoptedFrom?: string;
}

/**
 * One registration attempt: create, or on AlreadyExists adopt after the N4 check (re-asserting the
 * machine id and default labels, as the kubelet re-asserts its default labels). Throws
 * NodeNameTakenError on refusal and any API error as is (the caller retries with back-off).
 */
export async function createOrAdoptNode(api: AgentApi, clock: Clock, log: Logger, cfg: NodeConfig, desired: Node): Promise<RegisterResult> {
  try {
    const node = await api.create<Node>('/api/v1/nodes', desired);
    return { node, created: true };
  } catch (e) {
    // Admission comes before the store: a Node that exists already is refused for its labels first.
    if (isStatusError(e, 'Forbidden') && /is not allowed to set the following labels/.test(e.message)) {
      const registered = await createWithoutRestrictedLabels(api, log, desired, e.message);
      if (registered) return registered;
    } else if (!isAlreadyExists(e)) throw e;
  }
  const existing = await api.get<Node>(nodePath(cfg.nodeName));
  let lease: Lease | undefined;
  const theirs = existing.metadata.annotations?.[MACHINE_ID_ANNOTATION];
  if (theirs && theirs !== cfg.machineId) {
    try {
      lease = await api.get<Lease>(leasePath(cfg.nodeName));
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const refusal = adoptionRefusal(existing, lease, cfg.machineId, clock.now());
    if (refusal) throw refusal;
    log.warn({ node: cfg.nodeName, previousMachineId: theirs }, 'adopting a node registered by another machine whose Lease has expired');
  }
  const labels = defaultLabels(cfg);
  const needsPatch = theirs !== cfg.machineId || Object.entries(labels).some(([k, v]) => existing.metadata.labels?.[k] !== v);
  if (!needsPatch) return { node: existing, created: false };
  const patch = { metadata: { resourceVersion: existing.metadata.resourceVersion, annotations: { [MACHINE_ID_ANNOTATION]: cfg.machineId }, labels } };
  const node = await api.patch<Node>(nodePath(cfg.nodeName), patch, 'merge');
  return { node, created: false, ...(theirs && theirs !== cfg.machineId ? { adoptedFrom: theirs } : {}) };
}

/**
 * The API refused labels a node may not set itself: restored from a copy the API has no record of
 * (the Node was deleted before its server kept such records, say). Registering without them keeps
 * the node in the cluster; an administrator sets them again.
 */
async function createWithoutRestrictedLabels(api: AgentApi, log: Logger, desired: Node, why: string): Promise<RegisterResult | undefined> {
  const labels = { ...(desired.metadata.labels ?? {}) };
  const dropped = labelsNodeMayNotSet(Object.keys(labels));
  for (const k of dropped) delete labels[k];
  try {
    const node = await api.create<Node>('/api/v1/nodes', { ...desired, metadata: { ...desired.metadata, labels } });
    log.warn({ node: desired.metadata.name, dropped, err: why }, 'registered without labels the API does not let a node set');
    return { node, created: true };
  } catch (e) {
    // The Node is there: nothing was lost, it is adopted as it is.
    if (isAlreadyExists(e)) return undefined;
    throw e;
  }
}
