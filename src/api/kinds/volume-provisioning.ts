// The names dynamic provisioning is spoken in, between the scheduler (which picks a claim's node),
// the volume binding controller (which hands the claim to its class's provisioner) and the
// provisioner (which makes the volume): upstream's annotations, and the local-path class skiff
// ships as k3s does.
import { compileTerms, type NodeMatcher, type NodeSelectorTerm } from '../node-selector.js';
import type { KubeObject } from '../types.js';
import { obj, str } from './json.js';
import { DEFAULT_CLASS_ANNOTATION } from './storageclass.js';

/** Set on a WaitForFirstConsumer claim by the scheduler: the node its first pod goes to. */
export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';
/** Set on a claim by the volume binding controller: which provisioner is to make its volume. */
export const STORAGE_PROVISIONER_ANNOTATION = 'volume.kubernetes.io/storage-provisioner';
export const BETA_STORAGE_PROVISIONER_ANNOTATION = 'volume.beta.kubernetes.io/storage-provisioner';
/** Set on a volume by the provisioner that made it (the one that deletes it under reclaim Delete). */
export const PROVISIONED_BY_ANNOTATION = 'pv.kubernetes.io/provisioned-by';
/** The label a local volume's node affinity names its node by (the kubelet sets it to the node's name). */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
/** A class whose volumes are made by hand: nothing provisions for it. */
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

/**
 * k3s's provisioner name, kept so that manifests and charts written for k3s (a StorageClass naming
 * `rancher.io/local-path`, a claim that expects it) work unchanged on skiff.
 */
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';
export const LOCAL_PATH_CLASS = 'local-path';
/** Under an agent's data dir: one directory per volume. */
export const LOCAL_PATH_DIR = 'storage';

/** The default class a server creates on start unless a class of that name exists (k3s's local-storage manifest). */
export function localPathStorageClass(): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_PATH_CLASS, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
}

/** The provisioner a claim was handed to (the GA annotation, else the beta one). */
export function claimProvisioner(claim: KubeObject): string {
  const a = claim.metadata.annotations ?? {};
  return a[STORAGE_PROVISIONER_ANNOTATION] ?? a[BETA_STORAGE_PROVISIONER_ANNOTATION] ?? '';
}

export function selectedNodeOf(claim: KubeObject): string {
  return claim.metadata.annotations?.[SELECTED_NODE_ANNOTATION] ?? '';
}

/** What a claim asks for: spec.resources.requests.storage, as written. */
export function requestedStorage(claim: KubeObject): string {
  const q = obj(obj(obj(claim.spec).resources).requests).storage;
  return typeof q === 'number' ? String(q) : str(q);
}

/** Which nodes can reach a volume (its spec.nodeAffinity.required); undefined when any node can. */
export function volumeNodeMatcher(volume: KubeObject): NodeMatcher | undefined {
  const required = obj(obj(obj(volume.spec).nodeAffinity).required);
  if (!Array.isArray(required.nodeSelectorTerms)) return undefined;
  return compileTerms(required.nodeSelectorTerms as NodeSelectorTerm[]);
}

/** Node affinity naming exactly one node, as a local volume has it. */
export function nodeAffinityFor(nodeName: string): { required: { nodeSelectorTerms: NodeSelectorTerm[] } } {
  return { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [nodeName] }] }] } };
}
