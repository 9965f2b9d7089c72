// Service address allocation: a new Service gets a ClusterIP (and NodePorts) unless it asked for
// its own, and a requested one must be in range and free. Upstream does this in the Service
// registry; here it is a plugin of the mutating stage, so validation sees the allocated addresses.
import { invalid } from '../../api/errors.js';
import type { KubeObject, StatusCause } from '../../api/types.js';
import { goStringSlice, isValidIP } from '../../api/validation.js';
import { isCore, type AdmissionPlugin } from './plugin.js';

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

/**
 * Allocation against the addresses every other Service holds (`kubernetes` always holds the first
 * one); `services` lists them as the watch cache has them.
 */
export function serviceAddresses(services: () => readonly KubeObject[]): AdmissionPlugin {
  return {
    name: 'ServiceAddresses',
    handles: (op, rt) => (op === 'CREATE' || op === 'UPDATE') && isCore(rt, 'services'),
    mutate: (a) => {
      const obj = a.object;
      if ((a.subresource !== '' && a.subresource !== 'scale') || !obj) return;
      const isKubernetes = obj.metadata.namespace === 'default' && obj.metadata.name === 'kubernetes';
      const inUse: ServiceAddressesInUse = { clusterIPs: new Set<string>(isKubernetes ? [] : [KUBERNETES_SERVICE_IP]), nodePorts: new Set<number>() };
      for (const svc of services()) {
        if (svc.metadata.namespace === obj.metadata.namespace && svc.metadata.name === obj.metadata.name) continue;
        const spec = (svc.spec ?? {}) as { clusterIP?: string; ports?: { nodePort?: number }[] };
        if (spec.clusterIP) inUse.clusterIPs.add(spec.clusterIP);
        for (const p of spec.ports ?? []) if (p.nodePort) inUse.nodePorts.add(p.nodePort);
      }
      checkServiceAddresses(obj, a.oldObject, inUse);
      if (a.operation === 'CREATE') allocateServiceAddresses(obj, inUse, isKubernetes ? KUBERNETES_SERVICE_IP : undefined);
    },
  };
}
