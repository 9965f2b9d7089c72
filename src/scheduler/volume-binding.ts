// Upstream's VolumeBinding plugin: a pod goes where its volumes are.
//   PreFilter: every claim the pod mounts exists and is not being deleted, and none of an
//              Immediate class is still unbound.
//   Filter:    a node must reach each bound claim's volume (its node affinity), and for each claim
//              that waits for its first consumer, offer a free volume that fits or a provisioner
//              (the class's allowedTopologies permitting).
//   PreBind:   such a claim is pre-bound to the chosen free volume, or given the node through
//              volume.kubernetes.io/selected-node for its provisioner; the pod is bound only once
//              every claim is Bound (upstream waits up to bindTimeoutSeconds, 600 s).
import type { Node } from '../api/kinds/node.js';
import type { Pod } from '../api/kinds/pod.js';
import { arr, obj, objArr, str } from '../api/kinds/json.js';
import { storageClassOf } from '../api/kinds/persistentvolume.js';
import { NO_PROVISIONER, SELECTED_NODE_ANNOTATION, selectedNodeOf, volumeNodeMatcher } from '../api/kinds/volume-provisioning.js';
import type { NodeMatcher } from '../api/node-selector.js';
import type { KubeObject } from '../api/types.js';
import { freeFor, reachableFrom, smallest } from '../api/volume-matching.js';
import type { Informer } from '../client/informer.js';
import type { FilterFailure } from './filters.js';
import type { NodeInfo } from './node-info.js';

export const REASON_VOLUME_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const REASON_VOLUME_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const UNBOUND_IMMEDIATE_MESSAGE = 'pod has unbound immediate PersistentVolumeClaims';
export const BIND_TIMEOUT_MS = 600_000;

const NODE_CONFLICT: FilterFailure = { reasons: [REASON_VOLUME_NODE_CONFLICT], unresolvable: true };
const BIND_CONFLICT: FilterFailure = { reasons: [REASON_VOLUME_BIND_CONFLICT], unresolvable: true };

/** A claim that waits for its first consumer, with its class. */
export interface DelayedClaim {
  claim: KubeObject;
  cls: KubeObject | undefined;
}

/** What the pod's claims ask of a node. */
export interface PodVolumes {
  /** Where the volumes of its bound claims can be reached from. */
  bound: NodeMatcher[];
  delayed: DelayedClaim[];
}

export type VolumePreFilter = { volumes: PodVolumes | undefined } | { unschedulable: string };

/** The claim names a pod mounts: named ones, and those of its ephemeral volumes (<pod>-<volume>). */
export function podClaimNames(pod: Pod): string[] {
  const out: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const volume = obj(v);
    const claimName = str(obj(volume.persistentVolumeClaim).claimName);
    if (claimName) out.push(claimName);
    else if (volume.ephemeral) out.push(`${pod.metadata.name}-${str(volume.name)}`);
  }
  return out;
}

/** A class's allowedTopologies against a node's labels: no terms allow every node. */
function topologyAllows(cls: KubeObject | undefined, labels: Record<string, string>): boolean {
  const terms = arr(cls?.allowedTopologies);
  if (terms.length === 0) return true;
  return terms.some((t) => objArr(obj(t).matchLabelExpressions).every((e) => arr(e.values).map(str).includes(labels[str(e.key)] ?? '\u0000')));
}

/** What the view reads of an informer. */
export type Lookup<T extends KubeObject> = Pick<Informer<T>, 'get' | 'list'>;

/** The scheduler's view of claims, volumes and classes (informers of its leadership term). */
export class VolumeView {
  constructor(
    private readonly claims: Lookup<KubeObject>,
    private readonly volumes: Lookup<KubeObject>,
    private readonly classes: Lookup<KubeObject>,
    private readonly nodes: Lookup<Node>,
  ) {}

  preFilter(pod: Pod): VolumePreFilter {
    const names = podClaimNames(pod);
    if (names.length === 0) return { volumes: undefined };
    const ns = pod.metadata.namespace ?? 'default';
    const out: PodVolumes = { bound: [], delayed: [] };
    let unboundImmediate = false;
    for (const name of names) {
      const claim = this.claims.get(`${ns}/${name}`);
      if (!claim) return { unschedulable: `persistentvolumeclaim "${name}" not found` };
      if (claim.metadata.deletionTimestamp) return { unschedulable: `persistentvolumeclaim "${name}" is being deleted` };
      const volumeName = str(obj(claim.spec).volumeName);
      if (volumeName) {
        const volume = this.volumes.get(volumeName);
        // A claim bound to a volume not seen yet: the volume's arrival brings the pod back.
        if (!volume) return { unschedulable: `persistentvolume "${volumeName}" not found` };
        const matcher = volumeNodeMatcher(volume);
        if (matcher) out.bound.push(matcher);
        continue;
      }
      const cls = this.classes.get(storageClassOf(claim));
      if (cls?.volumeBindingMode === 'WaitForFirstConsumer') out.delayed.push({ claim, cls });
      else unboundImmediate = true;
    }
    if (unboundImmediate) return { unschedulable: UNBOUND_IMMEDIATE_MESSAGE };
    return { volumes: out };
  }

  filter(v: PodVolumes, node: NodeInfo): FilterFailure | undefined {
    for (const m of v.bound) if (!m(node.labels, node.name)) return NODE_CONFLICT;
    for (const d of v.delayed) {
      const selected = selectedNodeOf(d.claim);
      // Already given to a node by an earlier attempt: its provisioner works for that node only.
      if (selected && selected !== node.name) return BIND_CONFLICT;
      if (this.freeVolume(d.claim, node.name)) continue;
      const provisioner = str(d.cls?.provisioner);
      if (provisioner && provisioner !== NO_PROVISIONER && topologyAllows(d.cls, node.labels)) continue;
      return BIND_CONFLICT;
    }
    return undefined;
  }

  /** The smallest free volume the node can reach that fits the claim. */
  freeVolume(claim: KubeObject, nodeName: string): KubeObject | undefined {
    const node = this.nodes.get(nodeName);
    return smallest(this.volumes.list().filter((vol) => freeFor(vol, claim) && reachableFrom(vol, node, nodeName)));
  }

  /** Whether every claim named is Bound (a claim gone or being deleted never will be: false). */
  allBound(keys: readonly string[]): boolean | undefined {
    for (const key of keys) {
      const c = this.claims.get(key);
      if (!c || c.metadata.deletionTimestamp) return undefined;
      if (str(obj(c.status).phase) !== 'Bound') return false;
    }
    return true;
  }
}

/** The writes that pre-bind a delayed claim on a node: the claimRef of a free volume, or the selected-node annotation. */
export function preBindWrite(view: VolumeView, claim: KubeObject, nodeName: string): { path: string; patch: Record<string, unknown> } | undefined {
  const ns = claim.metadata.namespace!;
  const name = claim.metadata.name!;
  if (selectedNodeOf(claim) === nodeName) return undefined;
  const volume = view.freeVolume(claim, nodeName);
  if (volume) {
    const claimRef = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name, uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion };
    return { path: `/api/v1/persistentvolumes/${encodeURIComponent(volume.metadata.name!)}`, patch: { metadata: { resourceVersion: volume.metadata.resourceVersion }, spec: { claimRef } } };
  }
  return {
    path: `/api/v1/namespaces/${encodeURIComponent(ns)}/persistentvolumeclaims/${encodeURIComponent(name)}`,
    patch: { metadata: { resourceVersion: claim.metadata.resourceVersion, annotations: { [SELECTED_NODE_ANNOTATION]: nodeName } } },
  };
}
