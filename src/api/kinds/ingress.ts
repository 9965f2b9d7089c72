// networking.k8s.io/v1 Ingress: stored and validated as upstream (no controller of skiff's serves it).
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import {
  childPath,
  indexPath,
  INVALID_IP_MESSAGE,
  invalidRendered,
  isDNS1123Subdomain,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  nameIsDNS1035Label,
  nameIsDNSSubdomain,
  pathSegmentName,
  validateMeta,
  validateObjectMetaUpdate,
} from '../validation.js';
import { arr, isObject, obj, str } from './json.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];

interface IngressOptions {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** A typed reference to another object as the backend (resource backends, IngressClass parameters). */
export function validateTypedReference(ref: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (typeof ref.apiGroup === 'string') out.push(...isDNS1123Subdomain(ref.apiGroup).map((m) => field.invalid(childPath(path, 'apiGroup'), ref.apiGroup, m)));
  for (const key of ['kind', 'name']) {
    const v = str(ref[key]);
    if (!v) out.push(field.required(childPath(path, key)));
    else out.push(...pathSegmentName(v, false).map((m) => field.invalid(childPath(path, key), v, m)));
  }
  return out;
}

function validateBackend(b: Record<string, unknown>, path: string): StatusCause[] {
  const hasResource = isObject(b.resource);
  const hasService = isObject(b.service);
  if (hasResource && hasService) return [field.invalid(path, '', 'cannot set both resource and service backends')];
  if (hasResource) return validateTypedReference(obj(b.resource), childPath(path, 'resource'));
  if (!hasService) return [field.invalid(path, '', 'resource or service backend is required')];
  const out: StatusCause[] = [];
  const service = obj(b.service);
  const name = str(service.name);
  if (!name) out.push(field.required(`${path}.service.name`));
  else out.push(...nameIsDNS1035Label(name, false).map((m) => field.invalid(`${path}.service.name`, name, m)));
  const port = obj(service.port);
  const portName = str(port.name);
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName && portNumber) out.push(field.invalid(path, '', 'cannot set both port name & port number'));
  else if (portName) out.push(...isValidPortName(portName).map((m) => field.invalid(`${path}.service.port.name`, portName, m)));
  else if (portNumber) out.push(...isValidPortNum(portNumber).map((m) => field.invalid(`${path}.service.port.number`, portNumber, m)));
  else out.push(field.required(path, 'port name or number is required'));
  return out;
}

function validateHTTPPath(p: Record<string, unknown>, path: string): StatusCause[] {
  const pathType = p.pathType;
  if (typeof pathType !== 'string') return [field.required(childPath(path, 'pathType'), 'pathType must be specified')];
  const out: StatusCause[] = [];
  const value = str(p.path);
  const pathPath = childPath(path, 'path');
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!value.startsWith('/')) out.push(field.invalid(pathPath, value, 'must be an absolute path'));
    if (value) {
      for (const seq of INVALID_PATH_SEQUENCES) if (value.includes(seq)) out.push(field.invalid(pathPath, value, `must not contain '${seq}'`));
      for (const suffix of INVALID_PATH_SUFFIXES) if (value.endsWith(suffix)) out.push(field.invalid(pathPath, value, `cannot end with '${suffix}'`));
    }
  } else if (pathType === 'ImplementationSpecific') {
    if (value && !value.startsWith('/')) out.push(field.invalid(pathPath, value, 'must be an absolute path'));
  } else {
    out.push(field.notSupported(childPath(path, 'pathType'), pathType, PATH_TYPES));
  }
  out.push(...validateBackend(obj(p.backend), childPath(path, 'backend')));
  return out;
}

function validateRuleValue(rule: Record<string, unknown>, path: string): StatusCause[] {
  if (!isObject(rule.http)) return [];
  const http = rule.http;
  const out: StatusCause[] = [];
  const paths = arr(http.paths);
  if (paths.length === 0) out.push(field.required(`${path}.http.paths`));
  paths.forEach((p, i) => out.push(...validateHTTPPath(obj(p), indexPath(`${path}.http.paths`, i))));
  return out;
}

function validateHost(host: string, path: string): StatusCause[] {
  return (host.includes('*') ? isWildcardDNS1123Subdomain(host) : isDNS1123Subdomain(host)).map((m) => field.invalid(path, host, m));
}

function validateIngressSpec(spec: Record<string, unknown>, opts: IngressOptions): StatusCause[] {
  const out: StatusCause[] = [];
  const rules = arr(spec.rules);
  if (rules.length === 0 && !isObject(spec.defaultBackend)) {
    const rendered = Array.isArray(spec.rules) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)';
    out.push(invalidRendered('spec', rendered, 'either `defaultBackend` or `rules` must be specified'));
  }
  if (isObject(spec.defaultBackend)) out.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((r, i) => {
    const rule = obj(r);
    const path = indexPath('spec.rules', i);
    const host = str(rule.host);
    if (host && isValidIP(host)) out.push(field.invalid(childPath(path, 'host'), host, 'must be a DNS name, not an IP address'));
    if (host) out.push(...validateHost(host, childPath(path, 'host')));
    if (!host.includes('*') || !opts.allowInvalidWildcardHostRule) out.push(...validateRuleValue(rule, path));
  });
  arr(spec.tls).forEach((t, i) => {
    const tls = obj(t);
    const path = indexPath('spec.tls', i);
    arr(tls.hosts).forEach((h, j) => out.push(...validateHost(str(h), indexPath(childPath(path, 'hosts'), j))));
    const secretName = str(tls.secretName);
    if (secretName && !opts.allowInvalidSecretName) out.push(...nameIsDNSSubdomain(secretName, false).map((m) => field.invalid(childPath(path, 'secretName'), secretName, m)));
  });
  if (typeof spec.ingressClassName === 'string') {
    const name = spec.ingressClassName;
    out.push(...nameIsDNSSubdomain(name, false).map((m) => field.invalid('spec.ingressClassName', name, m)));
  }
  return out;
}

// Stored objects that were valid under older rules stay updatable (upstream's ratcheting).
function optionsFor(old: KubeObject | undefined): IngressOptions {
  const spec = obj(old?.spec);
  return {
    allowInvalidSecretName: arr(spec.tls).some((t) => {
      const name = str(obj(t).secretName);
      return name !== '' && nameIsDNSSubdomain(name, false).length > 0;
    }),
    allowInvalidWildcardHostRule: arr(spec.rules).some((r) => str(obj(r).host).includes('*') && validateRuleValue(obj(r), '').length > 0),
  };
}

function validateIngress(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateIngressSpec(spec, optionsFor(old)));
  if (!old) {
    const annotation = o.metadata?.annotations?.[INGRESS_CLASS_ANNOTATION];
    if (annotation !== undefined && typeof spec.ingressClassName === 'string' && annotation !== spec.ingressClassName) {
      out.push(field.invalid(`annotations.${INGRESS_CLASS_ANNOTATION}`, annotation, 'must match `ingressClassName` when both are specified'));
    }
  }
  return out;
}

function validateIngressStatusUpdate(o: KubeObject, old: KubeObject): StatusCause[] {
  const out = validateObjectMetaUpdate(o.metadata, old.metadata);
  const oldIPs = new Set(arr(obj(obj(old.status).loadBalancer).ingress).map((i) => str(obj(i).ip)));
  arr(obj(obj(o.status).loadBalancer).ingress).forEach((e, i) => {
    const entry = obj(e);
    const path = indexPath('status.loadBalancer.ingress', i);
    const ip = str(entry.ip);
    if (ip && !oldIPs.has(ip) && !isValidIP(ip)) out.push(field.invalid(childPath(path, 'ip'), ip, INVALID_IP_MESSAGE));
    const hostname = str(entry.hostname);
    if (hostname) {
      out.push(...isDNS1123Subdomain(hostname).map((m) => field.invalid(childPath(path, 'hostname'), hostname, m)));
      if (isValidIP(hostname)) out.push(field.invalid(childPath(path, 'hostname'), hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return out;
}

/** Upstream formatHosts: the first three rule hosts, "*" when no rule names one. */
function hostsText(rules: unknown): string {
  const all = arr(rules).map((r) => str(obj(r).host));
  const max = 3;
  const list: string[] = [];
  let more = false;
  for (const host of all) {
    if (list.length === max) more = true;
    if (!more && host) list.push(host);
  }
  if (list.length === 0) return '*';
  const text = list.join(',');
  return more ? `${text} + ${all.length - max} more...` : text;
}

/** The load balancer's addresses, sorted and de-duplicated, cut to 16 characters as upstream's narrow output. */
function addressText(status: unknown): string {
  const addresses = new Set<string>();
  for (const e of arr(obj(obj(status).loadBalancer).ingress)) {
    const entry = obj(e);
    const value = str(entry.ip) || str(entry.hostname);
    if (value) addresses.add(value);
  }
  const text = [...addresses].sort().join(',');
  return text.length > 16 ? `${text.slice(0, 13)}...` : text;
}

export const ingressResource: ResourceType = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingresses',
  kind: 'Ingress',
  listKind: 'IngressList',
  singular: 'ingress',
  namespaced: true,
  shortNames: ['ing'],
  categories: [],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
      column('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
      column('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
      column('Ports', 'string', 'Ports of TLS configurations that open'),
      ageColumn,
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const className = typeof spec.ingressClassName === 'string' ? spec.ingressClassName : '<none>';
      return [o.metadata?.name ?? '', className, hostsText(spec.rules), addressText(o.status), arr(spec.tls).length > 0 ? '80, 443' : '80', age(o, now)];
    },
  },
  hasGeneration: true,
  defaults: () => {},
  validate: validateIngress,
  validateStatusUpdate: validateIngressStatusUpdate,
};
