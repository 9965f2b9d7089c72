// discovery.k8s.io/v1 EndpointSlice: the endpoints of a Service in slices of up to 100, each with
// its own conditions (ready, serving, terminating). kubectl ≥ 1.31 reads them for `describe
// service`; skiff's endpoints controllers write them next to the Endpoints object.
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
import { arr, objArr, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export type AddressType = 'IPv4' | 'IPv6' | 'FQDN';

export interface SliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: { kind?: string; namespace?: string; name?: string; uid?: string };
}

export interface SlicePort {
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  metadata: ObjectMeta;
  addressType?: AddressType;
  endpoints?: SliceEndpoint[];
  ports?: SlicePort[];
}

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_ENDPOINTS = 1000;
const MAX_PORTS = 20000;
const MAX_ADDRESSES = 100;

function validateEndpointSlice(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const slice = o as EndpointSlice;
  const addressType = str(slice.addressType);
  if (!addressType) out.push(field.required('addressType'));
  else if (!ADDRESS_TYPES.includes(addressType)) out.push(field.notSupported('addressType', addressType, ADDRESS_TYPES));
  else if (old && addressType !== (old as EndpointSlice).addressType) out.push(field.invalid('addressType', addressType, 'field is immutable'));
  const endpoints = objArr(slice.endpoints);
  if (endpoints.length > MAX_ENDPOINTS) out.push(field.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
  endpoints.forEach((e, i) => {
    const path = indexPath('endpoints', i);
    const addresses = arr(e.addresses);
    if (addresses.length === 0) out.push(field.required(childPath(path, 'addresses'), 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) out.push(field.tooMany(childPath(path, 'addresses'), addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => {
      const ap = indexPath(childPath(path, 'addresses'), j);
      const text = str(a);
      if (addressType === 'FQDN') out.push(...validateDNS1123Subdomain(text, ap));
      else if (!isValidIP(text)) out.push(field.invalid(ap, text, INVALID_IP_MESSAGE));
      else if ((addressType === 'IPv6') !== text.includes(':')) out.push(field.invalid(ap, text, `must be an ${addressType} address`));
    });
    if (typeof e.hostname === 'string') out.push(...validateDNS1123Label(e.hostname, childPath(path, 'hostname')));
    if (typeof e.nodeName === 'string') out.push(...validateDNS1123Subdomain(e.nodeName, childPath(path, 'nodeName')));
  });
  const ports = objArr(slice.ports);
  if (ports.length > MAX_PORTS) out.push(field.tooMany('ports', ports.length, MAX_PORTS));
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const path = indexPath('ports', i);
    const name = str(p.name);
    if (name) out.push(...validateDNS1123Label(name, childPath(path, 'name')));
    if (names.has(name)) out.push(field.duplicate(childPath(path, 'name'), name));
    names.add(name);
    if (typeof p.port === 'number') out.push(...isValidPortNum(p.port).map((m) => field.invalid(childPath(path, 'port'), p.port, m)));
    const protocol = str(p.protocol);
    if (protocol && !PROTOCOLS.includes(protocol)) out.push(field.notSupported(childPath(path, 'protocol'), protocol, PROTOCOLS));
    if (typeof p.appProtocol === 'string') out.push(...validateQualifiedName(p.appProtocol, childPath(path, 'appProtocol')));
  });
  return out;
}

function defaultEndpointSlice(o: KubeObject): void {
  for (const p of objArr((o as EndpointSlice).ports)) {
    if (!p.protocol) p.protocol = 'TCP';
    if (p.name === undefined) p.name = '';
  }
}

/** Up to three entries, then " + N more...", as upstream's printers list them. */
function firstThree(items: string[]): string {
  if (items.length === 0) return '<unset>';
  return items.length > 3 ? `${items.slice(0, 3).join(',')} + ${items.length - 3} more...` : items.join(',');
}

export const endpointSliceResource: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
  kind: 'EndpointSlice',
  listKind: 'EndpointSliceList',
  singular: 'endpointslice',
  namespaced: true,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('AddressType', 'string', 'Type of address contained in this endpoint slice.'),
      column('Ports', 'string', 'Ports contained in this endpoint slice.'),
      column('Endpoints', 'string', 'Endpoints contained in this endpoint slice.'),
      column('Age', 'string', 'Time since the object was created.'),
    ],
    cells: (o, now) => {
      const s = o as EndpointSlice;
      return [
        o.metadata?.name ?? '',
        str(s.addressType),
        firstThree(objArr(s.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : '<unset>'))),
        firstThree(objArr(s.endpoints).flatMap((e) => arr(e.addresses).map(String))),
        age(o, now),
      ];
    },
  },
  hasGeneration: true,
  defaults: defaultEndpointSlice,
  validate: validateEndpointSlice,
};
