// How quota measures each kind of object (upstream's quota evaluators): pods by what they request,
// Services by type and ports, claims by storage (per StorageClass too), and every other namespaced
// resource by count (`count/<resource>.<group>`, with the legacy short names for a few core kinds).
import { arr, obj, str } from '../kinds/json.js';
import { count, resourceList, type Amount, type ResourceList } from '../resource-list.js';
import type { KubeObject } from '../types.js';
import { isPodQuotaResource, podConstraints, podMatchesScope, podUsage } from './pod-usage.js';
import type { ScopeRequirement } from './scopes.js';

export type QuotaOperation = 'CREATE' | 'UPDATE';

export interface QuotaEvaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether any update can change what an object counts (else only creates are asked about). */
  readonly updates: boolean;
  /** Whether this write can change what the object counts (asked before any quota is read). */
  handles(operation: QuotaOperation, subresource: string, object: KubeObject | undefined, old: KubeObject | undefined): boolean;
  /** The quota resources (of a quota's hard list) this evaluator counts. */
  matchingResources(names: readonly string[]): string[];
  /** Whether an object falls in one scope of a quota; kinds without scopes fall in none. */
  matchesScope(req: ScopeRequirement, object: KubeObject): boolean;
  usage(object: KubeObject, nowMs: number): ResourceList;
  /** Why the object lacks what a quota on `required` demands of it, or undefined. */
  constraints(required: readonly string[], object: KubeObject): string | undefined;
}

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise. */
function objectCountName(group: string, resource: string): string {
  return group === '' ? `count/${resource}` : `count/${resource}.${group}`;
}

const noScope = (): boolean => false;
const noConstraints = (): undefined => undefined;

function intersection(names: readonly string[], known: readonly string[]): string[] {
  return names.filter((n) => known.includes(n));
}

const podEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'pods',
  updates: false,
  // Only a new pod changes usage: its resources cannot change after creation.
  handles: (op, sub) => op === 'CREATE' && sub === '',
  matchingResources: (names) => names.filter(isPodQuotaResource),
  matchesScope: podMatchesScope,
  usage: podUsage,
  constraints: podConstraints,
};

const SERVICE_RESOURCES = ['count/services', 'services', 'services.loadbalancers', 'services.nodeports'];

function serviceUsage(svc: KubeObject): ResourceList {
  const spec = obj(svc.spec);
  const ports = arr(spec.ports);
  const type = str(spec.type);
  let nodePorts = 0;
  if (type === 'NodePort') nodePorts = ports.length;
  else if (type === 'LoadBalancer') {
    // Without node ports allocated, only the ports that name one count.
    nodePorts = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof obj(p).nodePort === 'number' && obj(p).nodePort !== 0).length : ports.length;
  }
  return new Map<string, Amount>([
    ['count/services', count(1)],
    ['services', count(1)],
    ['services.loadbalancers', count(type === 'LoadBalancer' ? 1 : 0)],
    ['services.nodeports', count(nodePorts)],
  ]);
}

const serviceEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'services',
  updates: true,
  // An update can change a Service's type, and with it what it counts.
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  matchingResources: (names) => intersection(names, SERVICE_RESOURCES),
  matchesScope: noScope,
  usage: serviceUsage,
  constraints: noConstraints,
};

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const CLAIM_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];

function claimClass(pvc: KubeObject): string {
  const spec = obj(pvc.spec);
  if (typeof spec.storageClassName === 'string') return spec.storageClassName;
  return str(pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class']);
}

/** Storage asked for, or what was allocated when that is more; counted in whole bytes. */
function claimStorage(pvc: KubeObject): Amount | undefined {
  const roundUp = (a: Amount): Amount => ({ nanos: ((a.nanos + 999_999_999n) / 1_000_000_000n) * 1_000_000_000n, format: a.format });
  const asked = resourceList(obj(obj(pvc.spec).resources).requests).get('storage');
  if (!asked) return undefined;
  const allocated = resourceList(obj(pvc.status).allocatedResources).get('storage');
  return roundUp(allocated && allocated.nanos > asked.nanos ? allocated : asked);
}

function claimUsage(pvc: KubeObject): ResourceList {
  const out: ResourceList = new Map([
    ['persistentvolumeclaims', count(1)],
    ['count/persistentvolumeclaims', count(1)],
  ]);
  const cls = claimClass(pvc);
  if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, count(1));
  const storage = claimStorage(pvc);
  if (storage) {
    out.set('requests.storage', storage);
    if (cls) out.set(`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
  }
  return out;
}

const claimEvaluator: QuotaEvaluator = {
  group: '',
  resource: 'persistentvolumeclaims',
  updates: true,
  handles: (op, sub, object, old) => {
    if (sub === '') return true;
    // A resize the volume's driver reports grows what the claim holds.
    if (sub !== 'status' || op !== 'UPDATE' || !object || !old) return false;
    return resourceList(obj(object.status).allocatedResources).get('storage')?.nanos !== resourceList(obj(old.status).allocatedResources).get('storage')?.nanos;
  },
  matchingResources: (names) =>
    names.filter((n) => n === 'count/persistentvolumeclaims' || CLAIM_RESOURCES.includes(n) || CLAIM_RESOURCES.some((r) => n.endsWith(STORAGE_CLASS_SUFFIX + r))),
  matchesScope: noScope,
  usage: claimUsage,
  constraints: noConstraints,
};

/** The core kinds quota also counts under their old short names (`secrets` beside `count/secrets`). */
const LEGACY_COUNT_NAMES: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

function countEvaluator(group: string, resource: string): QuotaEvaluator {
  const names = [objectCountName(group, resource)];
  const legacy = group === '' ? LEGACY_COUNT_NAMES[resource] : undefined;
  if (legacy) names.push(legacy);
  return {
    group,
    resource,
    updates: false,
    handles: (op) => op === 'CREATE',
    matchingResources: (hard) => intersection(hard, names),
    matchesScope: noScope,
    usage: () => new Map(names.map((n) => [n, count(1)])),
    constraints: noConstraints,
  };
}

/** Resources quota never counts: Events come and go by the thousand and expire by themselves. */
function ignored(group: string, resource: string): boolean {
  return resource === 'events' && (group === '' || group === 'events.k8s.io');
}

const SPECIFIC = new Map([podEvaluator, serviceEvaluator, claimEvaluator].map((e) => [`${e.group}/${e.resource}`, e]));

/** The evaluator of a namespaced resource, or undefined for one quota ignores. */
export function quotaEvaluatorFor(group: string, resource: string): QuotaEvaluator | undefined {
  if (ignored(group, resource)) return undefined;
  return SPECIFIC.get(`${group}/${resource}`) ?? countEvaluator(group, resource);
}

/** The group and resource a `count/<resource>[.<group>]` name counts, or undefined for another name. */
function countedResource(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

/** The resources whose objects a quota with these hard names counts, by group and resource. */
export function countedKinds(hard: readonly string[]): { group: string; resource: string }[] {
  const out = new Map<string, { group: string; resource: string }>();
  const want = (group: string, resource: string): void => void out.set(`${group}/${resource}`, { group, resource });
  for (const e of SPECIFIC.values()) if (e.matchingResources(hard).length > 0) want(e.group, e.resource);
  for (const [resource, legacy] of Object.entries(LEGACY_COUNT_NAMES)) if (hard.includes(legacy)) want('', resource);
  for (const n of hard) {
    const c = countedResource(n);
    if (c && !ignored(c.group, c.resource)) want(c.group, c.resource);
  }
  return [...out.values()];
}
