// Service address allocation: a new Service gets a ClusterIP (and NodePorts) unless it asked for
// its own, and a requested one must be in range and free. Upstream does this in the Service
// registry; here it is a plugin of the mutating stage, so validation sees the allocated addresses.
import { invalid } from '../../api/errors.js';
import type { KubeObject, StatusCause } from '../../api/types.js';
import { goStringSlice, isValidIP } from '../../api/validation.js';
import type { ServiceRange } from '../../api/service-range.js';
import { isCore, type AdmissionPlugin } from './plugin.js';

export interface ServiceAddressesInUse {
  clusterIPs: Set<string>;
  nodePorts: Set<number>;
}

type NodePortSpec = { type?: string; externalTrafficPolicy?: string; allocateLoadBalancerNodePorts?: boolean; healthCheckNodePort?: number; ports?: { nodePort?: number }[] };

/** Whether a Service gets NodePorts: NodePort, and LoadBalancer unless it opted out. */
function wantsNodePorts(spec: NodePortSpec): boolean {
  return spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

/** A LoadBalancer sending only to local endpoints gets a port the cloud's health checks ask each node on. */
export function wantsHealthCheckNodePort(spec: NodePortSpec): boolean {
  return spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

function freeNodePort(inUse: ServiceAddressesInUse, range: ServiceRange): number | undefined {
  const { base, max } = range.nodePorts;
  const size = max - base + 1;
  // Random tries first (cheap while the range is mostly free), then a scan, as for ClusterIPs.
  for (let attempt = 0; attempt < 100; attempt++) {
    const p = base + Math.floor(Math.random() * size);
    if (!inUse.nodePorts.has(p)) return p;
  }
  for (let p = base; p <= max; p++) if (!inUse.nodePorts.has(p)) return p;
  return undefined;
}

/**
 * Assigns a ClusterIP (and NodePorts) to a new Service that did not ask for specific ones, as
 * upstream's service IP allocator does. The first address of the range is kept for `kubernetes`.
 */
export function allocateServiceAddresses(svc: KubeObject, inUse: ServiceAddressesInUse, range: ServiceRange, reserved?: string): void {
  const spec = (svc.spec ??= {}) as { type?: string; clusterIP?: string; clusterIPs?: string[]; ports?: { nodePort?: number }[] };
  const type = spec.type ?? 'ClusterIP';
  if (type !== 'ExternalName' && !spec.clusterIP) {
    let ip = reserved;
    // Random tries first (cheap while the range is mostly free), then a scan so a nearly full range still finds its last free address.
    const choices = Number(range.usable) - 1;
    for (let attempt = 0; !ip && attempt < 1000; attempt++) {
      const candidate = range.at(BigInt(2 + Math.floor(Math.random() * choices)));
      if (!inUse.clusterIPs.has(candidate)) ip = candidate;
    }
    for (let n = 2; !ip && n <= choices + 1; n++) {
      const candidate = range.at(BigInt(n));
      if (!inUse.clusterIPs.has(candidate)) ip = candidate;
    }
    if (ip) {
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    }
  } else if (spec.clusterIP && !spec.clusterIPs) {
    spec.clusterIPs = [spec.clusterIP];
  }
  allocateNodePorts(svc, inUse, range);
}

/**
 * NodePorts for the ports of a NodePort or LoadBalancer Service that have none (on create, and on
 * an update that made it one), and its health check node port; the range full is upstream's error.
 */
export function allocateNodePorts(svc: KubeObject, inUse: ServiceAddressesInUse, range: ServiceRange): void {
  const spec = (svc.spec ?? {}) as NodePortSpec;
  const full = (field: string) => invalid('Service', '', svc.metadata.name ?? '', [{ reason: 'FieldValueInvalid', field, message: `Invalid value: 0: failed to allocate a nodePort: range is full` }]);
  if (wantsNodePorts(spec)) {
    portsOf(spec).forEach((port, i) => {
      if (port.nodePort) return;
      const p = freeNodePort(inUse, range);
      if (p === undefined) throw full(`spec.ports[${i}].nodePort`);
      port.nodePort = p;
      inUse.nodePorts.add(p);
    });
  }
  if (wantsHealthCheckNodePort(spec) && !spec.healthCheckNodePort) {
    const p = freeNodePort(inUse, range);
    if (p === undefined) throw full('spec.healthCheckNodePort');
    spec.healthCheckNodePort = p;
    inUse.nodePorts.add(p);
  }
}

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  healthCheckNodePort?: number;
  ports?: { nodePort?: number }[];
}

/**
 * What upstream's IP and port allocators refuse: a requested ClusterIP outside the service range
 * or held by another Service, a NodePort outside 30000-32767 or held by another Service. `inUse`
 * holds the addresses of every other Service; on update only newly requested values are checked.
 * Malformed addresses are left to validation.
 */
export function checkServiceAddresses(svc: KubeObject, old: KubeObject | undefined, inUse: ServiceAddressesInUse, range: ServiceRange): void {
  const spec = (svc.spec ?? {}) as ServiceSpec;
  const oldSpec = (old?.spec ?? {}) as ServiceSpec;
  const causes: StatusCause[] = [];
  const ip = spec.clusterIP;
  if (!old && ip && ip !== 'None' && spec.type !== 'ExternalName' && isValidIP(ip)) {
    const failed = (why: string) =>
      causes.push({ reason: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `Invalid value: ${goStringSlice([ip])}: failed to allocate IP ${ip}: ${why}` });
    if (!range.contains(ip)) failed(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${range.cidr}`);
    else if (inUse.clusterIPs.has(ip)) failed('provided IP is already allocated');
  }
  const held = new Set([...portsOf(oldSpec).map((p) => p.nodePort), oldSpec.healthCheckNodePort].filter((n): n is number => typeof n === 'number' && n > 0));
  const { base, max } = range.nodePorts;
  const check = (n: unknown, field: string) => {
    if (typeof n !== 'number' || n === 0 || held.has(n)) return;
    if (n < base || n > max) {
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${n}: provided port is not in the valid range. The range of valid ports is ${base}-${max}` });
    } else if (inUse.nodePorts.has(n)) {
      causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${n}: provided port is already allocated` });
    }
  };
  (Array.isArray(spec.ports) ? spec.ports : []).forEach((p, i) => check(p !== null && typeof p === 'object' ? p.nodePort : undefined, `spec.ports[${i}].nodePort`));
  check(spec.healthCheckNodePort, 'spec.healthCheckNodePort');
  if (causes.length > 0) throw invalid('Service', '', svc.metadata.name ?? '', causes);
}

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
export function serviceAddresses(services: () => readonly KubeObject[], range: ServiceRange): AdmissionPlugin {
  return {
    name: 'ServiceAddresses',
    handles: (op, rt) => (op === 'CREATE' || op === 'UPDATE') && isCore(rt, 'services'),
    mutate: (a) => {
      const obj = a.object;
      if ((a.subresource !== '' && a.subresource !== 'scale') || !obj) return;
      const isKubernetes = obj.metadata.namespace === 'default' && obj.metadata.name === 'kubernetes';
      const inUse: ServiceAddressesInUse = { clusterIPs: new Set<string>(isKubernetes ? [] : [range.kubernetesIp]), nodePorts: new Set<number>() };
      for (const svc of services()) {
        if (svc.metadata.namespace === obj.metadata.namespace && svc.metadata.name === obj.metadata.name) continue;
        const spec = (svc.spec ?? {}) as { clusterIP?: string; healthCheckNodePort?: number; ports?: { nodePort?: number }[] };
        if (spec.clusterIP) inUse.clusterIPs.add(spec.clusterIP);
        for (const p of spec.ports ?? []) if (p.nodePort) inUse.nodePorts.add(p.nodePort);
        if (spec.healthCheckNodePort) inUse.nodePorts.add(spec.healthCheckNodePort);
      }
      checkServiceAddresses(obj, a.oldObject, inUse, range);
      // A port another Service gave up is free again at once: what is in use is read from the Services themselves.
      if (a.operation === 'CREATE') allocateServiceAddresses(obj, inUse, range, isKubernetes ? range.kubernetesIp : undefined);
      else allocateNodePorts(obj, inUse, range);
    },
  };
}
