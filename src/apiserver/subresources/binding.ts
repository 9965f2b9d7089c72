// pods/binding: the scheduler's way of assigning a pod to a node.
import type { KubeObject } from '../../api/types.js';
import { StatusError, badRequest } from '../../api/errors.js';
import { deepClone } from '../../api/kinds/json.js';

export function bindPod(pod: KubeObject, binding: KubeObject, now: string): KubeObject {
  const target = binding.target as { name?: unknown; kind?: unknown } | undefined;
  const nodeName = target?.name;
  if (typeof nodeName !== 'string' || nodeName === '') throw badRequest('Binding.target.name: Required value');
  if (target?.kind !== undefined && target.kind !== 'Node' && target.kind !== '') {
    throw badRequest(`Binding.target.kind: Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node"`);
  }
  const name = pod.metadata.name!;
  const spec = (pod.spec ?? {}) as { nodeName?: string };
  if (pod.metadata.deletionTimestamp) {
    throw bindingConflict(name, `pod ${name} is being deleted, cannot be assigned to a host`);
  }
  if (spec.nodeName) throw bindingConflict(name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
  const next = deepClone(pod);
  (next.spec as { nodeName?: string }).nodeName = nodeName;
  const status = ((next.status ??= {}) as { conditions?: { type: string; status: string; lastTransitionTime?: string | null; lastProbeTime?: string | null }[] });
  const conditions = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
  conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now });
  status.conditions = conditions;
  return next;
}

function bindingConflict(name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${name}": ${why}`, { name, kind: 'pods/binding' });
}
