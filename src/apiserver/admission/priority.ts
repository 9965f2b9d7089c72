// Priority: a pod's priority is its PriorityClass's value, resolved once at creation (the
// scheduler and preemption compare numbers, not names). A pod naming no class gets the global
// default's, else 0; and only one class may be the global default.
import { forbiddenObject } from '../../api/errors.js';
import type { PriorityClass } from '../../api/kinds/priorityclass.js';
import { isObject } from '../../api/kinds/json.js';
import { isCore, type AdmissionAttributes, type AdmissionPlugin } from './plugin.js';

export interface PriorityClassLookup {
  /** Every class the server knows of now. */
  list(): readonly PriorityClass[];
  /** One class, from the cache or from storage when the cache has not seen it yet. */
  find(name: string): Promise<PriorityClass | undefined>;
}

interface PrioritySpec {
  priorityClassName?: string;
  priority?: number;
  preemptionPolicy?: string;
}

/** The global default class; with several (two servers raced), the lowest, as upstream picks. */
export function defaultPriorityClass(classes: readonly PriorityClass[]): PriorityClass | undefined {
  let best: PriorityClass | undefined;
  for (const pc of classes) if (pc.globalDefault === true && (!best || (best.value ?? 0) > (pc.value ?? 0))) best = pc;
  return best;
}

function refuse(a: AdmissionAttributes, why: string): never {
  throw forbiddenObject(a.resource.resource, a.resource.group, a.name, why);
}

async function admitPod(a: AdmissionAttributes, classes: PriorityClassLookup): Promise<void> {
  const pod = a.object;
  if (!pod || !isObject(pod.spec)) return;
  const spec = pod.spec as PrioritySpec;
  if (a.operation === 'UPDATE') {
    // Priority is set once; an update that leaves it out keeps it (validation refuses changes).
    const old = (a.oldObject?.spec ?? {}) as PrioritySpec;
    if (spec.priority === undefined && old.priority !== undefined) spec.priority = old.priority;
    if (spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
    return;
  }
  let priority = 0;
  let policy: string | undefined;
  if (typeof spec.priorityClassName !== 'string' || spec.priorityClassName === '') {
    const pc = defaultPriorityClass(classes.list());
    if (pc) {
      spec.priorityClassName = pc.metadata.name;
      priority = pc.value ?? 0;
      policy = pc.preemptionPolicy;
    }
  } else {
    const pc = await classes.find(spec.priorityClassName);
    if (!pc) refuse(a, `no PriorityClass with name ${spec.priorityClassName} was found`);
    priority = pc.value ?? 0;
    policy = pc.preemptionPolicy;
  }
  if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
    refuse(a, `the integer value of priority (${String(spec.priority)}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
  }
  spec.priority = priority;
  if (policy !== undefined) {
    if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
      refuse(a, `the string value of PreemptionPolicy (${String(spec.preemptionPolicy)}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
    }
    spec.preemptionPolicy = policy;
  }
}

function validateClass(a: AdmissionAttributes, classes: PriorityClassLookup): void {
  const pc = a.object as PriorityClass | undefined;
  if (!pc || pc.globalDefault !== true) return;
  const current = defaultPriorityClass(classes.list());
  if (current && (a.operation === 'CREATE' || current.metadata.name !== pc.metadata.name)) {
    refuse(a, `PriorityClass ${current.metadata.name} is already marked as default. Only one default can exist`);
  }
}

const isPriorityClass = (a: { group: string; resource: string }): boolean => a.group === 'scheduling.k8s.io' && a.resource === 'priorityclasses';

export function priorityAdmission(classes: PriorityClassLookup): AdmissionPlugin {
  return {
    name: 'Priority',
    handles: (op, rt) => (isCore(rt, 'pods') && (op === 'CREATE' || op === 'UPDATE')) || (isPriorityClass(rt) && op !== 'DELETE'),
    mutate: (a) => {
      if (a.subresource !== '' || !isCore(a.resource, 'pods')) return;
      return admitPod(a, classes);
    },
    validate: (a) => {
      if (a.subresource !== '' || !isPriorityClass(a.resource)) return;
      validateClass(a, classes);
    },
  };
}

