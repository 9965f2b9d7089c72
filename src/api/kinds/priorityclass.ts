// scheduling.k8s.io/v1 PriorityClass: a named pod priority. Names starting with `system-` belong
// to the two classes the server creates itself; user classes stay at or below 1e9 so system
// pods always outrank them.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { nameIsDNSSubdomain, validateMeta, validateImmutable } from '../validation.js';
import { bool, optStr, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface PriorityClass extends KubeObject {
  metadata: ObjectMeta;
  value?: number;
  globalDefault?: boolean;
  description?: string;
  preemptionPolicy?: string;
}

export const SCHEDULING_GROUP = 'scheduling.k8s.io';
export const SYSTEM_PRIORITY_CLASS_PREFIX = 'system-';
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
export const SYSTEM_CLUSTER_CRITICAL = 'system-cluster-critical';
export const SYSTEM_NODE_CRITICAL = 'system-node-critical';
export const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'];

/** The classes the server ensures at start, as upstream's scheduling storage does. */
export const SYSTEM_PRIORITY_CLASSES: readonly PriorityClass[] = [
  systemClass(SYSTEM_CLUSTER_CRITICAL, SYSTEM_CRITICAL_PRIORITY, 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.'),
  systemClass(SYSTEM_NODE_CRITICAL, SYSTEM_CRITICAL_PRIORITY + 1000, 'Used for system critical pods that must not be moved from their current node.'),
];

function systemClass(name: string, value: number, description: string): PriorityClass {
  return { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, description, preemptionPolicy: 'PreemptLowerPriority' };
}

/** Why a `system-` class is not one of the known ones, or undefined when it is. */
function unknownSystemClass(name: string, value: number, globalDefault: boolean): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((pc) => pc.metadata.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

export function validatePreemptionPolicy(v: unknown, path: string): StatusCause[] {
  if (v === '') return [field.required(path)];
  if (typeof v === 'string' && PREEMPTION_POLICIES.includes(v)) return [];
  return [field.notSupported(path, v, PREEMPTION_POLICIES)];
}

function validatePriorityClass(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const value = typeof o.value === 'number' ? o.value : 0;
  if (old) {
    const oldValue = typeof old.value === 'number' ? old.value : 0;
    if (value !== oldValue) out.push(field.forbidden('value', 'may not be changed in an update.'));
    out.push(...validateImmutable(o.preemptionPolicy, old.preemptionPolicy, 'preemptionPolicy'));
    return out;
  }
  const name = o.metadata?.name ?? '';
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const why = unknownSystemClass(name, value, bool(o.globalDefault));
    if (why) out.push(field.forbidden('metadata.name', `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${why}`));
  } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    out.push(field.forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`));
  }
  if (o.preemptionPolicy !== undefined && o.preemptionPolicy !== null) out.push(...validatePreemptionPolicy(o.preemptionPolicy, 'preemptionPolicy'));
  return out;
}

export const priorityClassResource: ResourceType = {
  group: SCHEDULING_GROUP,
  version: 'v1',
  resource: 'priorityclasses',
  kind: 'PriorityClass',
  listKind: 'PriorityClassList',
  singular: 'priorityclass',
  namespaced: false,
  shortNames: ['pc'],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Value', 'integer', 'The value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.'),
      column('Global-Default', 'boolean', 'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.'),
      column('Age', 'string', 'Time since the object was created.'),
      column('PreemptionPolicy', 'string', 'preemptionPolicy is the Policy for preempting pods with lower priority.'),
    ],
    cells: (o, now) => [o.metadata?.name ?? '', typeof o.value === 'number' ? o.value : 0, bool(o.globalDefault), age(o, now), str(o.preemptionPolicy)],
  },
  hasGeneration: false,
  defaults: (o) => {
    if (optStr(o.preemptionPolicy) === undefined) o.preemptionPolicy = 'PreemptLowerPriority';
  },
  validate: validatePriorityClass,
  // The server would only make them again at its next start, and pods name them meanwhile.
  refuseDelete: (o) => (SYSTEM_PRIORITY_CLASSES.some((pc) => pc.metadata.name === o.metadata.name) ? 'this is a system priority class and cannot be deleted' : undefined),
};
