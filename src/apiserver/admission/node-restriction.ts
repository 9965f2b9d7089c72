// NodeRestriction, as upstream's admission plugin: a node credential may create only its own Node
// and Lease, change and delete only the pods bound to it, set taints on its Node only when it
// registers and never change them afterwards, and set or change only the labels a kubelet may
// (src/api/node-labels.ts), refused with upstream's messages. skiff's agents provision local-path
// volumes (see src/agent/volumes/): a node may create and delete only such PersistentVolumes, and
// only those whose node affinity names itself alone.
//
// skiff's agents re-create their Node when it is deleted, restoring what administrators had set.
// So that this stays within the rules, every server records the labels a Node had when it was
// deleted, with the machine it ran on (a small key of its own in the store, shared by every member,
// kept RECORD_TTL_SECONDS), and a node re-registering from that machine within that time may set a
// label it may not otherwise set only with the value recorded for it: what it restores is what an
// administrator set, nothing it invents. After that, or from another machine, it registers without
// them, as a kubelet would. (Taints a node may set at registration, as upstream; a node that deletes
// its own Node can so drop an administrator's taint there too.)
import { forbidden } from '../../api/errors.js';
import { changedLabels, labelsNodeMayNotSet } from '../../api/node-labels.js';
import { jsonEqual, obj } from '../../api/kinds/json.js';
import { LOCAL_PATH_PROVISIONER, nodeAffinityFor, PROVISIONED_BY_ANNOTATION } from '../../api/kinds/volume-provisioning.js';
import type { KubeObject } from '../../api/types.js';
import { MACHINE_ID_ANNOTATION } from '../../api/kinds/node.js';
import { isStoreError, type Store } from '../../store/store.js';
import { nodeNameOf } from '../../auth/user.js';
import { isCore, type AdmissionAttributes, type AdmissionPlugin } from './plugin.js';

/** Where the labels of a deleted Node are kept, by node name (outside /registry: no API serves them). */
export function lastLabelsKey(nodeName: string): string {
  return `/skiff/last-node-labels/${nodeName}`;
}

/** How long after a deletion its record lets the node restore restricted labels: an agent that runs re-creates its Node within a second. */
const RECORD_TTL_SECONDS = 600;

interface DeletedNodeRecord {
  labels: Record<string, string>;
  machineId?: string;
}

function refuse(nodeName: string, why: string): never {
  throw forbidden(`nodes "${nodeName}" is forbidden: node "${nodeName}" ${why}`, 'nodes', '', nodeName);
}

function labelsOf(o: KubeObject): Record<string, string> {
  return (o.metadata.labels ?? {}) as Record<string, string>;
}

function taintsOf(o: KubeObject): unknown[] {
  return ((o.spec ?? {}) as { taints?: unknown[] }).taints ?? [];
}

function boundTo(pod: KubeObject | undefined): string | undefined {
  return ((pod?.spec ?? {}) as { nodeName?: string }).nodeName;
}

/** The labels each deleted Node had, kept in the store for its agent's re-registration. */
export class DeletedNodeLabels {
  constructor(private readonly store: Store) {}

  /** Records a Node's labels as it is deleted, for its agent's re-registration. */
  async recordDeletion(node: KubeObject): Promise<void> {
    const key = lastLabelsKey(node.metadata.name ?? '');
    const record: DeletedNodeRecord = { labels: labelsOf(node) };
    const machineId = node.metadata.annotations?.[MACHINE_ID_ANNOTATION];
    if (machineId) record.machineId = machineId;
    const value = JSON.stringify(record);
    const ttl = { ttlSeconds: RECORD_TTL_SECONDS };
    for (let attempt = 0; attempt < 5; attempt++) {
      const kv = await this.store.get(key);
      try {
        if (!kv) await this.store.create(key, value, ttl);
        else await this.store.update(key, value, kv.modRevision, ttl);
        return;
      } catch (e) {
        // Another member recorded the same deletion at this moment: read again and settle.
        if (!isStoreError(e, 'exists') && !isStoreError(e, 'conflict') && !isStoreError(e, 'not-found')) throw e;
      }
    }
  }

  async lastRecord(nodeName: string): Promise<DeletedNodeRecord | undefined> {
    const kv = await this.store.get(lastLabelsKey(nodeName));
    if (!kv) return undefined;
    try {
      const parsed = JSON.parse(kv.value) as Partial<DeletedNodeRecord>;
      return { labels: parsed.labels ?? {}, ...(typeof parsed.machineId === 'string' ? { machineId: parsed.machineId } : {}) };
    } catch {
      return undefined;
    }
  }
}

export function nodeRestriction(deleted: DeletedNodeLabels): AdmissionPlugin {
  // A node's own Node: taints unchanged, labels changed only where a kubelet may.
  const admitNodeUpdate = (node: string, next: KubeObject, old: KubeObject): void => {
    if (!jsonEqual(taintsOf(next), taintsOf(old))) refuse(node, 'is not allowed to modify taints');
    const forbiddenKeys = labelsNodeMayNotSet(changedLabels(labelsOf(next), labelsOf(old)));
    if (forbiddenKeys.length > 0) refuse(node, `is not allowed to modify labels: ${forbiddenKeys.join(', ')}`);
  };
  // A node registering: labels a kubelet may not set only as the Node had them when it was last deleted.
  const admitNodeCreate = async (node: string, obj: KubeObject): Promise<void> => {
    const labels = labelsOf(obj);
    const restricted = labelsNodeMayNotSet(Object.keys(labels));
    if (restricted.length === 0) return;
    const recorded = await deleted.lastRecord(obj.metadata.name ?? '');
    const sameMachine = recorded?.machineId !== undefined && recorded.machineId === obj.metadata.annotations?.[MACHINE_ID_ANNOTATION];
    const invented = restricted.filter((k) => !sameMachine || recorded?.labels[k] !== labels[k]);
    if (invented.length > 0) refuse(node, `is not allowed to set the following labels: ${invented.join(', ')}`);
  };
  // Judged on the object the write applies to, not on what the authorizer saw: that may have been a
  // cached pod of the same name (deleted and created again, now bound elsewhere), and a write that
  // started from a stale cache is admitted again on the stored object.
  const onlyBoundPods = (node: string, a: AdmissionAttributes): void => {
    if (boundTo(a.oldObject) === node) return;
    throw forbidden(`node "${node}" can only change pods bound to it`, 'pods', '', a.name);
  };
  const onlyOwnLocalVolumes = (node: string, volume: KubeObject | undefined, name: string): void => {
    if (volume && volume.metadata.annotations?.[PROVISIONED_BY_ANNOTATION] === LOCAL_PATH_PROVISIONER && jsonEqual(obj(volume.spec).nodeAffinity, nodeAffinityFor(node))) return;
    throw forbidden(`node "${node}" may only create and delete ${LOCAL_PATH_PROVISIONER} volumes whose node affinity names it`, 'persistentvolumes', '', name);
  };
  return {
    name: 'NodeRestriction',
    // A Lease renewal is judged by the Node authorizer alone: no admission on the heartbeat path.
    handles: (op, rt) =>
      (isCore(rt, 'pods') && op !== 'CREATE') || (isCore(rt, 'nodes') && op !== 'DELETE') || (rt.group === 'coordination.k8s.io' && rt.resource === 'leases' && op === 'CREATE') ||
      (isCore(rt, 'persistentvolumes') && op !== 'UPDATE'),
    mutate: (a) => {
      const node = nodeNameOf(a.user);
      if (node === undefined || !a.object) return;
      if (a.resource.resource === 'pods') return onlyBoundPods(node, a);
      if (a.resource.resource === 'persistentvolumes') return onlyOwnLocalVolumes(node, a.object, a.name || a.object.metadata.name || '');
      if (a.operation === 'CREATE') {
        if (a.object.metadata.name !== node) {
          const what = a.resource.resource === 'nodes' ? 'a Node' : 'a Lease';
          throw forbidden(`node "${node}" is not allowed to create ${what} named "${a.object.metadata.name}"`, a.resource.resource, a.resource.group, a.object.metadata.name);
        }
        return a.resource.resource === 'nodes' ? admitNodeCreate(node, a.object) : undefined;
      }
      if (a.resource.resource === 'nodes' && a.subresource === '' && a.oldObject) admitNodeUpdate(node, a.object, a.oldObject);
    },
    validate: (a) => {
      const node = nodeNameOf(a.user);
      if (node === undefined || a.operation !== 'DELETE') return;
      if (a.resource.resource === 'persistentvolumes') onlyOwnLocalVolumes(node, a.oldObject, a.name);
      else onlyBoundPods(node, a);
    },
  };
}
