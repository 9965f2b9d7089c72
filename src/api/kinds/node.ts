// core/v1 Node.
import { field } from '../errors.js';
import { INVALID_CIDR_MESSAGE, isValidCidr } from '../cidr.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  childPath,
  duplicateRendered,
  indexPath,
  isValidLabelValue,
  nameIsDNSSubdomain,
  validateLabelName,
  validateMeta,
} from '../validation.js';
import { arr, isObject, obj, objArr, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';


/** Held by a Node until a cloud controller has initialised it (upstream's name). */
export const UNINITIALIZED_TAINT = 'node.cloudprovider.kubernetes.io/uninitialized';
/** The machine an agent runs on, as it registered its Node (N4: a name is not taken over from a live machine). */
export const MACHINE_ID_ANNOTATION = 'skiff.dev/machine-id';
/** The label naming a node's runtime (process, simulated, containerd): what it can serve follows from it. */
export const RUNTIME_LABEL = 'skiff.dev/runtime';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  timeAdded?: string;
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
  providerID?: string;
  unschedulable?: boolean;
  taints?: Taint[];
}

export interface NodeCondition {
  type: 'Ready' | 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable' | string;
  status: 'True' | 'False' | 'Unknown';
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface NodeAddress {
  type: 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS' | string;
  address: string;
}

export interface NodeSystemInfo {
  machineID?: string;
  systemUUID?: string;
  bootID?: string;
  kernelVersion?: string;
  osImage?: string;
  containerRuntimeVersion?: string;
  kubeletVersion?: string;
  kubeProxyVersion?: string;
  operatingSystem?: string;
  architecture?: string;
}

export interface NodeStatus {
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  phase?: string;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: NodeSystemInfo;
}

export interface Node extends KubeObject {
  metadata: ObjectMeta;
  spec?: NodeSpec;
  status?: NodeStatus;
}

const TAINT_EFFECTS: TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Upstream validateTaintEffect; tolerations allow an empty effect (match all), taints do not. */
export function validateTaintEffect(effect: string, allowEmpty: boolean, path: string): StatusCause[] {
  if (!allowEmpty && effect === '') return [field.required(path)];
  if (effect === '' || (TAINT_EFFECTS as string[]).includes(effect)) return [];
  return [field.notSupported(path, effect, TAINT_EFFECTS)];
}

function goTaint(t: Record<string, unknown>): string {
  const timeAdded = t.timeAdded ? '&v1.Time{}' : '(*v1.Time)(nil)';
  return `core.Taint{Key:${JSON.stringify(str(t.key))}, Value:${JSON.stringify(str(t.value))}, Effect:${JSON.stringify(str(t.effect))}, TimeAdded:${timeAdded}}`;
}

export function validateTaints(taints: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Map<string, Set<string>>();
  objArr(taints).forEach((t, i) => {
    const p = indexPath(path, i);
    const key = str(t.key);
    const value = str(t.value);
    const effect = str(t.effect);
    out.push(...validateLabelName(key, childPath(p, 'key')));
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length) out.push(field.invalid(childPath(p, 'value'), value, valueErrs.join(';')));
    out.push(...validateTaintEffect(effect, false, childPath(p, 'effect')));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(key)) {
      out.push(duplicateRendered(p, goTaint(t), 'taints must be unique by key and effect pair'));
      return;
    }
    keys.add(key);
    seen.set(effect, keys);
  });
  return out;
}

function validateNode(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateTaints(spec.taints, 'spec.taints'));
  arr(spec.podCIDRs).forEach((c, i) => {
    if (!isValidCidr(str(c))) out.push(field.invalid(indexPath('spec.podCIDRs', i), str(c), INVALID_CIDR_MESSAGE));
  });
  if (old) {
    const oldSpec = obj(old.spec);
    const oldCIDRs = arr(oldSpec.podCIDRs).map(str);
    const newCIDRs = arr(spec.podCIDRs).map(str);
    // Once assigned (by the node IPAM controller), pod CIDRs and the provider ID stay put.
    if (oldCIDRs.length > 0) {
      if (oldCIDRs.length !== newCIDRs.length) out.push(field.forbidden('spec.podCIDRs', 'may not change once set'));
      else
        oldCIDRs.forEach((c, i) => {
          if (c !== newCIDRs[i]) out.push(field.forbidden(indexPath('spec.podCIDRs', i), 'may not change once set'));
        });
    }
    const oldProvider = str(oldSpec.providerID);
    if (oldProvider && oldProvider !== str(spec.providerID)) out.push(field.forbidden('spec.providerID', 'update not allowed'));
  }
  return out;
}

function defaultNode(o: KubeObject): void {
  if (!isObject(o.status)) return;
  const status = o.status;
  if (status.allocatable === undefined && isObject(status.capacity)) status.allocatable = { ...status.capacity };
}

/** A Node's Ready condition as a word: Ready, NotReady, or Unknown (also when it has none yet). */
export function nodeReadyState(n: { status?: { conditions?: readonly { type: string; status: string }[] } }): 'Ready' | 'NotReady' | 'Unknown' {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
}

/** Whether a Node's Ready condition is True. */
export function isNodeReady(n: { status?: { conditions?: readonly { type: string; status: string }[] } }): boolean {
  return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** STATUS cell: Ready/NotReady/Unknown from the Ready condition, plus SchedulingDisabled when cordoned. */
export function nodeStatusText(o: KubeObject): string {
  const ready = objArr(obj(o.status).conditions).find((c) => str(c.type) === 'Ready');
  const parts: string[] = [];
  if (ready) parts.push(str(ready.status) === 'True' ? 'Ready' : 'NotReady');
  else parts.push('Unknown');
  if (obj(o.spec).unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

/** Roles from node-role.kubernetes.io/<role> label keys and the legacy kubernetes.io/role value, sorted. */
export function nodeRoles(o: KubeObject): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata?.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && typeof v === 'string' && v !== '') {
      roles.add(v);
    }
  }
  return [...roles].sort();
}

function nodeAddress(o: KubeObject, type: string): string {
  const a = objArr(obj(o.status).addresses).find((x) => str(x.type) === type);
  return a ? str(a.address) : '<none>';
}

function orUnknown(s: string): string {
  return s === '' ? '<unknown>' : s;
}

export const nodeResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'nodes',
  kind: 'Node',
  listKind: 'NodeList',
  singular: 'node',
  namespaced: false,
  shortNames: ['no'],
  categories: [],
  subresources: ['status'],
  // Agents register their Node with its status, as kubelets do.
  keepsStatusOnCreate: true,
  returnsDeletedObject: true,
  fieldSelectors: {
    'spec.unschedulable': (o) => String(obj(o.spec).unschedulable === true),
  },
  table: {
    columns: [
      nameColumn,
      column('Status', 'string', 'Readiness of the node, and whether scheduling onto it is disabled.'),
      column('Roles', 'string', 'Roles of the node, from its node-role labels.'),
      column('Age', 'string', 'Time since the object was created.'),
      column('Version', 'string', 'Kubelet version reported by the node.'),
      column('Internal-IP', 'string', 'First internal IP address of the node.', 1),
      column('External-IP', 'string', 'First external IP address of the node.', 1),
      column('OS-Image', 'string', 'Operating system image reported by the node.', 1),
      column('Kernel-Version', 'string', 'Kernel version reported by the node.', 1),
      column('Container-Runtime', 'string', 'Container runtime and version reported by the node.', 1),
    ],
    cells(o, now) {
      const info = obj(obj(o.status).nodeInfo);
      const roles = nodeRoles(o).join(',');
      return [
        o.metadata?.name ?? '',
        nodeStatusText(o),
        roles === '' ? '<none>' : roles,
        age(o, now),
        str(info.kubeletVersion),
        nodeAddress(o, 'InternalIP'),
        nodeAddress(o, 'ExternalIP'),
        orUnknown(str(info.osImage)),
        orUnknown(str(info.kernelVersion)),
        orUnknown(str(info.containerRuntimeVersion)),
      ];
    },
  },
  hasGeneration: false,
  defaults: defaultNode,
  validate: validateNode,
};

