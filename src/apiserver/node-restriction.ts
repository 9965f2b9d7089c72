// NodeRestriction for a node's own Node, as upstream's admission plugin: a node credential may set
// taints only when it registers and never change them afterwards, and may set or change only the
// labels a kubelet may (src/api/node-labels.ts), refused with upstream's messages.
//
// skiff's agents re-create their Node when it is deleted, restoring what administrators had set.
// So that this stays within the rules, every server records the labels a Node had when it was
// deleted (a small key of its own in the store, shared by every member), and a node re-registering
// may set a label it may not otherwise set only with the value recorded for it: what it restores
// is what an administrator set, nothing it invents.
import { forbidden } from '../api/errors.js';
import { changedLabels, labelsNodeMayNotSet } from '../api/node-labels.js';
import { jsonEqual } from '../api/kinds/json.js';
import type { KubeObject } from '../api/types.js';
import { isStoreError, type Store } from '../store/store.js';
import type { UserInfo } from '../auth/user.js';
import { nodeNameOf } from './node-authorizer.js';

/** Where the labels of a deleted Node are kept, by node name (outside /registry: no API serves them). */
export function lastLabelsKey(nodeName: string): string {
  return `/skiff/last-node-labels/${nodeName}`;
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

export class NodeRestriction {
  constructor(private readonly store: Store) {}

  /** A node's write to its own Node: taints unchanged, labels changed only where a kubelet may. */
  admitUpdate(user: UserInfo, next: KubeObject, old: KubeObject): void {
    const node = nodeNameOf(user);
    if (node === undefined) return;
    if (!jsonEqual(taintsOf(next), taintsOf(old))) refuse(node, 'is not allowed to modify taints');
    const forbiddenKeys = labelsNodeMayNotSet(changedLabels(labelsOf(next), labelsOf(old)));
    if (forbiddenKeys.length > 0) refuse(node, `is not allowed to modify labels: ${forbiddenKeys.join(', ')}`);
  }

  /** A node registering: labels a kubelet may not set only as the Node had them when it was last deleted. */
  async admitCreate(user: UserInfo, obj: KubeObject): Promise<void> {
    const node = nodeNameOf(user);
    if (node === undefined) return;
    const labels = labelsOf(obj);
    const restricted = labelsNodeMayNotSet(Object.keys(labels));
    if (restricted.length === 0) return;
    const recorded = await this.lastLabels(obj.metadata.name ?? '');
    const invented = restricted.filter((k) => recorded?.[k] !== labels[k]);
    if (invented.length > 0) refuse(node, `is not allowed to set the following labels: ${invented.join(', ')}`);
  }

  /** Records a Node's labels as it is deleted, for its agent's re-registration. */
  async recordDeletion(node: KubeObject): Promise<void> {
    const key = lastLabelsKey(node.metadata.name ?? '');
    const value = JSON.stringify({ labels: labelsOf(node) });
    for (let attempt = 0; attempt < 5; attempt++) {
      const kv = await this.store.get(key);
      try {
        if (!kv) await this.store.create(key, value);
        else if (kv.value !== value) await this.store.update(key, value, kv.modRevision);
        return;
      } catch (e) {
        // Another member recorded the same deletion at this moment: read again and settle.
        if (!isStoreError(e, 'exists') && !isStoreError(e, 'conflict') && !isStoreError(e, 'not-found')) throw e;
      }
    }
  }

  private async lastLabels(nodeName: string): Promise<Record<string, string> | undefined> {
    const kv = await this.store.get(lastLabelsKey(nodeName));
    if (!kv) return undefined;
    try {
      return (JSON.parse(kv.value) as { labels?: Record<string, string> }).labels;
    } catch {
      return undefined;
    }
  }
}
