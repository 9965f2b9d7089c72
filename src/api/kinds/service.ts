// core/v1 Service. skiff keeps ClusterIP bookkeeping only; nothing proxies traffic.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  childPath,
  duplicateRendered,
  goStringSlice,
  indexPath,
  INVALID_IP_MESSAGE,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  nameIsDNS1035Label,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateLabels,
  validateMeta,
  validateQualifiedName,
} from '../validation.js';
import { arr, child, childObjects, isObject, num, obj, objArr, str, strMap } from './json.js';
import { age, column, formatLabels, nameColumn } from './printing.js';

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';

export interface ServicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface ServiceSpec {
  ports?: ServicePort[];
  selector?: Record<string, string>;
  clusterIP?: string;
  clusterIPs?: string[];
  type?: ServiceType;
  externalIPs?: string[];
  sessionAffinity?: 'None' | 'ClientIP';
  externalName?: string;
  externalTrafficPolicy?: 'Cluster' | 'Local';
  internalTrafficPolicy?: 'Cluster' | 'Local';
  ipFamilies?: ('IPv4' | 'IPv6')[];
  ipFamilyPolicy?: 'SingleStack' | 'PreferDualStack' | 'RequireDualStack';
  allocateLoadBalancerNodePorts?: boolean;
  publishNotReadyAddresses?: boolean;
  healthCheckNodePort?: number;
  loadBalancerClass?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] };
}

export interface Service extends KubeObject {
  metadata: ObjectMeta;
  spec?: ServiceSpec;
  status?: ServiceStatus;
}

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function isHeadless(spec: Record<string, unknown>): boolean {
  return str(spec.clusterIP) === 'None';
}

function defaultService(o: KubeObject): void {
  const spec = child(o, 'spec');
  if (!spec.sessionAffinity) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const timeout = obj(obj(spec.sessionAffinityConfig).clientIP).timeoutSeconds;
    if (typeof timeout !== 'number') spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  if (!spec.type) spec.type = 'ClusterIP';
  for (const p of childObjects(spec, 'ports')) {
    if (!p.protocol) p.protocol = 'TCP';
    if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  const type = str(spec.type);
  const externallyAccessible = type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && arr(spec.externalIPs).length > 0);
  if (externallyAccessible && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (spec.internalTrafficPolicy === undefined && (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP')) {
    spec.internalTrafficPolicy = 'Cluster';
  }
  if (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined) spec.allocateLoadBalancerNodePorts = true;

  // What the service registry fills in once a cluster IP is known (single-stack IPv4 cluster).
  if (type === 'ExternalName') return;
  const clusterIP = str(spec.clusterIP);
  if (clusterIP && arr(spec.clusterIPs).length === 0) spec.clusterIPs = [clusterIP];
  if (!clusterIP && arr(spec.clusterIPs).length > 0) spec.clusterIP = str(arr(spec.clusterIPs)[0]);
  if (spec.ipFamilyPolicy === undefined) {
    const headlessWithoutSelector = clusterIP === 'None' && Object.keys(strMap(spec.selector)).length === 0;
    spec.ipFamilyPolicy = headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack';
  }
  if (arr(spec.ipFamilies).length === 0) {
    if (spec.ipFamilyPolicy === 'RequireDualStack') spec.ipFamilies = ['IPv4', 'IPv6'];
    else spec.ipFamilies = [clusterIP.includes(':') ? 'IPv6' : 'IPv4'];
  }
}

function prepareForCreate(o: KubeObject): void {
  o.status = { loadBalancer: {} };
}

/** Fields the server assigned that a client's full update (e.g. kubectl apply) usually leaves out. */
function prepareForUpdate(o: KubeObject, old: KubeObject): void {
  const spec = child(o, 'spec');
  const oldSpec = obj(old.spec);
  const needsClusterIP = (s: Record<string, unknown>) => str(s.type || 'ClusterIP') !== 'ExternalName';
  if (needsClusterIP(oldSpec) && needsClusterIP(spec)) {
    if (!str(spec.clusterIP) && str(oldSpec.clusterIP)) spec.clusterIP = oldSpec.clusterIP;
    if (arr(spec.clusterIPs).length === 0 && arr(oldSpec.clusterIPs).length > 0) spec.clusterIPs = oldSpec.clusterIPs;
    // A changed clusterIP with clusterIPs left as they were (a patch of clusterIP alone) means the
    // new address, as upstream normalizes it, so the immutability check below sees the change.
    const ips = arr(spec.clusterIPs).map(str);
    const oldIps = arr(oldSpec.clusterIPs).map(str);
    if (str(spec.clusterIP) && ips.length > 0 && str(spec.clusterIP) !== ips[0] && ips.join() === oldIps.join()) {
      spec.clusterIPs = [str(spec.clusterIP), ...ips.slice(1)];
    }
    if (spec.ipFamilyPolicy === undefined && oldSpec.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
    if (arr(spec.ipFamilies).length === 0 && arr(oldSpec.ipFamilies).length > 0) spec.ipFamilies = oldSpec.ipFamilies;
  }
  const needsNodePort = (s: Record<string, unknown>) => s.type === 'NodePort' || s.type === 'LoadBalancer';
  if (needsNodePort(oldSpec) && needsNodePort(spec)) {
    const used = new Set(objArr(spec.ports).map((p) => num(p.nodePort)).filter((n) => n !== 0));
    const byName = new Map(objArr(oldSpec.ports).map((p) => [str(p.name), num(p.nodePort)] as const));
    for (const p of childObjects(spec, 'ports')) {
      if (num(p.nodePort) !== 0) continue;
      const oldVal = byName.get(str(p.name)) ?? 0;
      if (oldVal !== 0 && !used.has(oldVal)) p.nodePort = oldVal;
    }
  }
  // A type change away from NodePort gives the ports back, unless the client set them anew (as upstream's dropTypeDependentFields).
  if (needsNodePort(oldSpec) && !needsNodePort(spec)) {
    const oldPorts = objArr(oldSpec.ports).map((p) => num(p.nodePort));
    const newPorts = objArr(spec.ports).map((p) => num(p.nodePort));
    if (newPorts.every((n) => n === 0 || oldPorts.includes(n))) for (const p of childObjects(spec, 'ports')) delete p.nodePort;
  }
  const needsHealthCheck = (s: Record<string, unknown>) => s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';
  if (needsHealthCheck(oldSpec) && needsHealthCheck(spec) && !num(spec.healthCheckNodePort)) spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
  if (needsHealthCheck(oldSpec) && !needsHealthCheck(spec) && num(spec.healthCheckNodePort) === num(oldSpec.healthCheckNodePort)) delete spec.healthCheckNodePort;
}

function validatePortNumOrName(v: unknown, path: string): StatusCause[] {
  if (typeof v === 'number') return isValidPortNum(v).map((m) => field.invalid(path, v, m));
  if (typeof v === 'string') return isValidPortName(v).map((m) => field.invalid(path, v, m));
  return [];
}

function validateService(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNS1035Label);
  const spec = obj(o.spec);
  const type = str(spec.type);
  const ports = objArr(spec.ports);
  if (ports.length === 0 && !isHeadless(spec) && type !== 'ExternalName') out.push(field.required('spec.ports'));
  if (type === 'ExternalName') {
    if (arr(spec.clusterIPs).length > 0 || (str(spec.clusterIP) && str(spec.clusterIP) !== 'None')) {
      out.push(field.forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    }
    const cname = str(spec.externalName).replace(/\.$/, '');
    if (cname) out.push(...validateDNS1123Subdomain(cname, 'spec.externalName'));
    else out.push(field.required('spec.externalName'));
  }

  const names = new Set<string>();
  ports.forEach((p, i) => {
    const path = indexPath('spec.ports', i);
    const name = str(p.name);
    if (ports.length > 1 && !name) out.push(field.required(childPath(path, 'name')));
    else if (name) {
      out.push(...validateDNS1123Label(name, childPath(path, 'name')));
      if (names.has(name)) out.push(field.duplicate(childPath(path, 'name'), name));
      else names.add(name);
    }
    const port = num(p.port);
    out.push(...isValidPortNum(port).map((m) => field.invalid(childPath(path, 'port'), port, m)));
    const protocol = str(p.protocol);
    if (!protocol) out.push(field.required(childPath(path, 'protocol')));
    else if (!PORT_PROTOCOLS.includes(protocol)) out.push(field.notSupported(childPath(path, 'protocol'), protocol, PORT_PROTOCOLS));
    out.push(...validatePortNumOrName(p.targetPort, childPath(path, 'targetPort')));
    if (typeof p.appProtocol === 'string') out.push(...validateQualifiedName(p.appProtocol, childPath(path, 'appProtocol')));
    const nodePort = num(p.nodePort);
    if (nodePort !== 0) {
      if (type === 'ClusterIP') out.push(field.forbidden(childPath(path, 'nodePort'), "may not be used when `type` is 'ClusterIP'"));
      else out.push(...isValidPortNum(nodePort).map((m) => field.invalid(childPath(path, 'nodePort'), nodePort, m)));
    }
  });

  if (isObject(spec.selector)) out.push(...validateLabels(spec.selector, 'spec.selector'));
  const healthCheckNodePort = num(spec.healthCheckNodePort);
  if (healthCheckNodePort !== 0) {
    if (type !== 'LoadBalancer' || spec.externalTrafficPolicy !== 'Local') out.push(field.forbidden('spec.healthCheckNodePort', "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
    else out.push(...isValidPortNum(healthCheckNodePort).map((m) => field.invalid('spec.healthCheckNodePort', healthCheckNodePort, m)));
  }
  const affinity = str(spec.sessionAffinity);
  if (!affinity) out.push(field.required('spec.sessionAffinity'));
  else if (affinity !== 'ClientIP' && affinity !== 'None') out.push(field.notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  if (!type) out.push(field.required('spec.type'));
  else if (!SERVICE_TYPES.includes(type)) out.push(field.notSupported('spec.type', type, SERVICE_TYPES));

  arr(spec.clusterIPs).forEach((ip, i) => {
    const s = str(ip);
    if (s !== 'None' && !isValidIP(s)) out.push(field.invalid(indexPath('spec.clusterIPs', i), s, INVALID_IP_MESSAGE));
  });
  arr(spec.externalIPs).forEach((ip, i) => {
    const s = str(ip);
    if (!isValidIP(s)) out.push(field.invalid(indexPath('spec.externalIPs', i), s, INVALID_IP_MESSAGE));
  });

  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const key = `${str(p.protocol)}/${num(p.port)}`;
    if (seen.has(key)) {
      out.push(duplicateRendered(indexPath('spec.ports', i), `core.ServicePort{Name:"", Protocol:${JSON.stringify(str(p.protocol))}, AppProtocol:(*string)(nil), Port:${num(p.port)}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`));
    }
    seen.add(key);
  });

  if (old) {
    const oldSpec = obj(old.spec);
    const oldIPs = arr(oldSpec.clusterIPs).length ? arr(oldSpec.clusterIPs).map(str) : str(oldSpec.clusterIP) ? [str(oldSpec.clusterIP)] : [];
    const newIPs = arr(spec.clusterIPs).length ? arr(spec.clusterIPs).map(str) : str(spec.clusterIP) ? [str(spec.clusterIP)] : [];
    const switchingExternalName = type === 'ExternalName' || str(oldSpec.type) === 'ExternalName';
    // The primary cluster IP is fixed for the life of the service (unless it becomes or stops being ExternalName).
    if (!switchingExternalName && oldIPs.length > 0 && newIPs[0] !== oldIPs[0]) {
      out.push({ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: ${goStringSlice(newIPs)}: may not change once set` });
    }
  }
  return out;
}

function externalIPText(spec: Record<string, unknown>, status: Record<string, unknown>): string {
  const externalIPs = arr(spec.externalIPs).map(str);
  switch (str(spec.type)) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = new Set<string>();
      for (const i of objArr(obj(status.loadBalancer).ingress)) {
        if (str(i.ip)) ingress.add(str(i.ip));
        else if (str(i.hostname)) ingress.add(str(i.hostname));
      }
      const lb = [...ingress].sort();
      if (externalIPs.length) return [...lb, ...externalIPs].join(',');
      return lb.length ? lb.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
    default:
      return '<unknown>';
  }
}

/** The PORT(S) cell: "80/TCP", "80:30080/TCP", comma-joined. */
export function servicePortsText(spec: unknown): string {
  return objArr(obj(spec).ports)
    .map((p) => (num(p.nodePort) > 0 ? `${num(p.port)}:${num(p.nodePort)}/${str(p.protocol)}` : `${num(p.port)}/${str(p.protocol)}`))
    .join(',');
}

export const serviceResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'services',
  kind: 'Service',
  listKind: 'ServiceList',
  singular: 'service',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: ['status'],
  returnsDeletedObject: true,
  fieldSelectors: {
    'spec.clusterIP': (o) => str(obj(o.spec).clusterIP),
    'spec.type': (o) => str(obj(o.spec).type),
  },
  table: {
    columns: [
      nameColumn,
      column('Type', 'string', 'How the service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.'),
      column('Cluster-IP', 'string', 'Virtual IP of the service inside the cluster.'),
      column('External-IP', 'string', 'Addresses the service is reachable at from outside the cluster.'),
      column('Port(s)', 'string', 'Ports the service exposes.'),
      column('Age', 'string', 'Time since the object was created.'),
      column('Selector', 'string', 'Labels of the pods the service routes to.', 1),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const ips = arr(spec.clusterIPs).map(str);
      const clusterIP = ips[0] || str(spec.clusterIP) || '<none>';
      return [
        o.metadata?.name ?? '',
        str(spec.type),
        clusterIP,
        externalIPText(spec, obj(o.status)),
        servicePortsText(spec) || '<none>',
        age(o, now),
        formatLabels(spec.selector),
      ];
    },
  },
  hasGeneration: false,
  defaults: defaultService,
  validate: validateService,
  prepareForCreate,
  prepareForUpdate,
};
