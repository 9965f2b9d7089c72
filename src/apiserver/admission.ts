// Admission steps that upstream runs as plugins before storage.
import { invalid } from '../api/errors.js';
import type { KubeObject, StatusCause } from '../api/types.js';
import { goStringSlice, isValidIP } from '../api/validation.js';
import { API_ACCESS_VOLUME_PREFIX, SERVICE_ACCOUNT_MOUNT_PATH } from '../api/kinds/pod.js';

export interface AdmissionOptions {
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/**
 * DefaultTolerationSeconds: every pod tolerates not-ready/unreachable NoExecute taints for a
 * while (300 s upstream) unless it says otherwise, so a short blip does not evict it.
 */
export function defaultTolerationSeconds(pod: KubeObject, opts: AdmissionOptions): void {
  const spec = (pod.spec ??= {}) as { tolerations?: Toleration[] };
  const tolerations = spec.tolerations ?? [];
  const covers = (key: string) =>
    tolerations.some((t) => (t.effect === 'NoExecute' || !t.effect) && ((t.operator === 'Exists' && !t.key) || t.key === key));
  const add: Toleration[] = [];
  if (!covers(NOT_READY)) add.push({ key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.defaultNotReadyTolerationSeconds });
  if (!covers(UNREACHABLE)) add.push({ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.defaultUnreachableTolerationSeconds });
  if (add.length > 0) spec.tolerations = [...tolerations, ...add];
}

/** ServiceAccount admission: a pod that names no service account runs as its namespace's `default`. */
export function defaultServiceAccount(pod: KubeObject): void {
  const spec = (pod.spec ??= {}) as { serviceAccountName?: string; serviceAccount?: string };
  if (spec.serviceAccountName) return;
  spec.serviceAccountName = 'default';
  spec.serviceAccount = 'default';
}


interface MountingSpec {
  automountServiceAccountToken?: boolean;
  volumes?: { name: string; [k: string]: unknown }[];
  containers?: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
  initContainers?: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
}

/**
 * ServiceAccount admission's token volume: unless the pod or its service account opts out, or a
 * container already mounts something there, a projected volume of a bound token (renewed by the
 * node), the cluster CA (the kube-root-ca.crt ConfigMap) and the namespace, mounted read-only in
 * every container — so in-cluster clients work unchanged.
 */
export function mountServiceAccountToken(pod: KubeObject, account: KubeObject | undefined, suffix: string): void {
  const spec = (pod.spec ??= {}) as MountingSpec;
  const accountSays = (account as { automountServiceAccountToken?: boolean } | undefined)?.automountServiceAccountToken;
  if (spec.automountServiceAccountToken === false || (spec.automountServiceAccountToken === undefined && accountSays === false)) return;
  // Admission runs before validation: a spec of the wrong shape is left for validation to refuse.
  const shaped = (v: unknown) => v === undefined || Array.isArray(v);
  if (!shaped(spec.containers) || !shaped(spec.initContainers) || !shaped(spec.volumes)) return;
  const containers = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  if (containers.some((c) => c === null || typeof c !== 'object' || !shaped(c.volumeMounts))) return;
  if (containers.some((c) => (c.volumeMounts ?? []).some((m) => m?.mountPath === SERVICE_ACCOUNT_MOUNT_PATH))) return;
  const name = `${API_ACCESS_VOLUME_PREFIX}${suffix}`;
  spec.volumes = [
    ...(spec.volumes ?? []),
    {
      name,
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
  ];
  for (const c of containers) c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
}

export interface ServiceAddressesInUse {
  clusterIPs: Set<string>;
  nodePorts: Set<number>;
}

/** The service CIDR (k3s' default) and NodePort range; ClusterIPs are bookkeeping only in skiff. */
const SERVICE_CIDR_BASE = [10, 43];
const NODE_PORT_RANGE = [30000, 32767] as const;

/**
 * Assigns a ClusterIP (and NodePorts) to a new Service that did not ask for specific ones, as
 * upstream's service IP allocator does. The first address of the range is kept for `kubernetes`.
 */
export function allocateServiceAddresses(svc: KubeObject, inUse: ServiceAddressesInUse, reserved?: string): void {
  const spec = (svc.spec ??= {}) as { type?: string; clusterIP?: string; clusterIPs?: string[]; ports?: { nodePort?: number }[] };
  const type = spec.type ?? 'ClusterIP';
  if (type !== 'ExternalName' && !spec.clusterIP) {
    let ip = reserved;
    for (let attempt = 0; !ip && attempt < 65_000; attempt++) {
      const n = 2 + Math.floor(Math.random() * 65_000);
      const candidate = `${SERVICE_CIDR_BASE[0]}.${SERVICE_CIDR_BASE[1]}.${n >> 8}.${n & 255}`;
      if (!inUse.clusterIPs.has(candidate)) ip = candidate;
    }
    if (ip) {
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    }
  } else if (spec.clusterIP && !spec.clusterIPs) {
    spec.clusterIPs = [spec.clusterIP];
  }
  if (type === 'NodePort' || type === 'LoadBalancer') {
    for (const port of portsOf(spec)) {
      if (port.nodePort) continue;
      for (let attempt = 0; attempt < 10_000; attempt++) {
        const p = NODE_PORT_RANGE[0] + Math.floor(Math.random() * (NODE_PORT_RANGE[1] - NODE_PORT_RANGE[0] + 1));
        if (!inUse.nodePorts.has(p)) {
          port.nodePort = p;
          inUse.nodePorts.add(p);
          break;
        }
      }
    }
  }
}

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  ports?: { nodePort?: number }[];
}

const SERVICE_CIDR = `${SERVICE_CIDR_BASE[0]}.${SERVICE_CIDR_BASE[1]}.0.0/16`;

/** A usable address of the service range (not its network or broadcast address). */
function inServiceRange(ip: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m || Number(m[1]) !== SERVICE_CIDR_BASE[0] || Number(m[2]) !== SERVICE_CIDR_BASE[1]) return false;
  const host = Number(m[3]) * 256 + Number(m[4]);
  return host > 0 && host < 65_535;
}

/**
 * What upstream's IP and port allocators refuse: a requested ClusterIP outside the service range
 * or held by another Service, a NodePort outside 30000-32767 or held by another Service. `inUse`
 * holds the addresses of every other Service; on update only newly requested values are checked.
 * Malformed addresses are left to validation.
 */
export function checkServiceAddresses(svc: KubeObject, old: KubeObject | undefined, inUse: ServiceAddressesInUse): void {
  const spec = (svc.spec ?? {}) as ServiceSpec;
  const oldSpec = (old?.spec ?? {}) as ServiceSpec;
  const causes: StatusCause[] = [];
  const ip = spec.clusterIP;
  if (!old && ip && ip !== 'None' && spec.type !== 'ExternalName' && isValidIP(ip)) {
    const failed = (why: string) =>
      causes.push({ reason: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `Invalid value: ${goStringSlice([ip])}: failed to allocate IP ${ip}: ${why}` });
    if (!inServiceRange(ip)) failed(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${SERVICE_CIDR}`);
    else if (inUse.clusterIPs.has(ip)) failed('provided IP is already allocated');
  }
  const held = new Set(portsOf(oldSpec).map((p) => p.nodePort).filter((n): n is number => typeof n === 'number' && n > 0));
  (Array.isArray(spec.ports) ? spec.ports : []).forEach((p, i) => {
    const n = p !== null && typeof p === 'object' ? p.nodePort : undefined;
    if (typeof n !== 'number' || n === 0 || held.has(n)) return;
    const field = `spec.ports[${i}].nodePort`;
    if (n < NODE_PORT_RANGE[0] || n > NODE_PORT_RANGE[1]) {
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${n}: provided port is not in the valid range. The range of valid ports is ${NODE_PORT_RANGE[0]}-${NODE_PORT_RANGE[1]}` });
    } else if (inUse.nodePorts.has(n)) {
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${n}: provided port is already allocated` });
    }
  });
  if (causes.length > 0) throw invalid('Service', '', svc.metadata.name ?? '', causes);
}

/** The ClusterIP of `default/kubernetes`: the first usable address of the service range. */
export const KUBERNETES_SERVICE_IP = `${SERVICE_CIDR_BASE[0]}.${SERVICE_CIDR_BASE[1]}.0.1`;

/**
 * The ports of a Service spec that are objects: admission runs before validation, which reports a
 * `ports` that is not a list, or an entry that is null, with its field path.
 */
function portsOf(spec: { ports?: unknown }): { nodePort?: number }[] {
  return Array.isArray(spec.ports) ? spec.ports.filter((p): p is { nodePort?: number } => p !== null && typeof p === 'object') : [];
}
