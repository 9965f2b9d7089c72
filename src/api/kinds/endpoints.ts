// core/v1 Endpoints (skiff keeps default/kubernetes listing the API servers in it).
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  childPath,
  indexPath,
  INVALID_IP_MESSAGE,
  isValidIP,
  isValidPortNum,
  nameIsDNSSubdomain,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateMeta,
  validateQualifiedName,
} from '../validation.js';
import { childObjects, num, objArr, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: { kind?: string; namespace?: string; name?: string; uid?: string };
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KubeObject {
  metadata: ObjectMeta;
  subsets?: EndpointSubset[];
}

const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function defaultEndpoints(o: KubeObject): void {
  for (const ss of childObjects(o, 'subsets')) for (const p of childObjects(ss, 'ports')) if (!p.protocol) p.protocol = 'TCP';
}

function validateAddress(a: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const ip = str(a.ip);
  if (!isValidIP(ip)) out.push(field.invalid(childPath(path, 'ip'), ip, INVALID_IP_MESSAGE));
  // Upstream also rejects loopback and link-local addresses; skiff allows them so a single-machine
  // control plane can advertise 127.0.0.1 in default/kubernetes.
  else if (ip === '0.0.0.0' || ip === '::') out.push(field.invalid(childPath(path, 'ip'), ip, 'may not be unspecified (0.0.0.0)'));
  const hostname = str(a.hostname);
  if (hostname) out.push(...validateDNS1123Label(hostname, childPath(path, 'hostname')));
  if (typeof a.nodeName === 'string') out.push(...validateDNS1123Subdomain(a.nodeName, childPath(path, 'nodeName')));
  return out;
}

function validateEndpoints(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  objArr(o.subsets).forEach((ss, i) => {
    const path = indexPath('subsets', i);
    const addresses = objArr(ss.addresses);
    const notReady = objArr(ss.notReadyAddresses);
    if (addresses.length === 0 && notReady.length === 0) out.push(field.required(path, 'must specify `addresses` or `notReadyAddresses`'));
    addresses.forEach((a, j) => out.push(...validateAddress(a, indexPath(childPath(path, 'addresses'), j))));
    notReady.forEach((a, j) => out.push(...validateAddress(a, indexPath(childPath(path, 'notReadyAddresses'), j))));
    const ports = objArr(ss.ports);
    ports.forEach((p, j) => {
      const pp = indexPath(childPath(path, 'ports'), j);
      const name = str(p.name);
      if (ports.length > 1 && !name) out.push(field.required(childPath(pp, 'name')));
      else if (name) out.push(...validateDNS1123Label(name, childPath(pp, 'name')));
      const port = num(p.port);
      out.push(...isValidPortNum(port).map((m) => field.invalid(childPath(pp, 'port'), port, m)));
      const protocol = str(p.protocol);
      if (!protocol) out.push(field.required(childPath(pp, 'protocol')));
      else if (!PORT_PROTOCOLS.includes(protocol)) out.push(field.notSupported(childPath(pp, 'protocol'), protocol, PORT_PROTOCOLS));
      if (typeof p.appProtocol === 'string') out.push(...validateQualifiedName(p.appProtocol, childPath(pp, 'appProtocol')));
    });
  });
  return out;
}

function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** The ENDPOINTS cell: up to three "ip:port" entries, then " + N more...". */
export function formatEndpoints(o: KubeObject): string {
  const subsets = objArr(o.subsets);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addresses = objArr(ss.addresses);
    const ports = objArr(ss.ports);
    if (ports.length === 0) {
      // Headless services may have endpoints without ports.
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(str(a.ip));
      }
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(joinHostPort(str(a.ip), num(p.port)));
      }
    }
  }
  const joined = list.join(',');
  return more ? `${joined} + ${count - max} more...` : joined;
}

export const endpointsResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'endpoints',
  kind: 'Endpoints',
  listKind: 'EndpointsList',
  singular: 'endpoints',
  namespaced: true,
  shortNames: ['ep'],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Endpoints', 'string', 'Addresses and ports the service resolves to.'), column('Age', 'string', 'Time since the object was created.')],
    cells: (o, now) => [o.metadata?.name ?? '', formatEndpoints(o), age(o, now)],
  },
  hasGeneration: false,
  defaults: defaultEndpoints,
  validate: validateEndpoints,
};

