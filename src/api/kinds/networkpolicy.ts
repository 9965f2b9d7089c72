// networking.k8s.io/v1 NetworkPolicy: stored and validated as upstream; skiff enforces no traffic rules.
import { field } from '../errors.js';
import { isStrictSubset, INVALID_CIDR_MESSAGE, parseCidr } from '../cidr.js';
import { validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, indexPath, invalidRendered, isValidPortName, isValidPortNum, goStringSlice, nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { arr, child, childObjects, isObject, obj, str } from './json.js';
import { age, ageColumn, column, nameColumn } from './printing.js';
import { formatLabelSelector } from './replicaset.js';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];

function defaultNetworkPolicy(o: KubeObject): void {
  const spec = child(o, 'spec');
  // podSelector is a plain struct upstream: always written, {} when unset.
  if (!isObject(spec.podSelector)) spec.podSelector = {};
  for (const key of ['ingress', 'egress'] as const) {
    for (const rule of childObjects(spec, key)) {
      for (const port of childObjects(rule, 'ports')) if (port.protocol === undefined || port.protocol === null) port.protocol = 'TCP';
    }
  }
  if (arr(spec.policyTypes).length === 0) {
    // Every policy affects ingress; one with egress rules affects egress too.
    spec.policyTypes = arr(spec.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

function validatePort(port: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const protocol = port.protocol;
  if (typeof protocol === 'string' && !PROTOCOLS.includes(protocol)) out.push(field.notSupported(childPath(path, 'protocol'), protocol, PROTOCOLS));
  const endPort = typeof port.endPort === 'number' ? port.endPort : undefined;
  if (typeof port.port === 'number') {
    out.push(...isValidPortNum(port.port).map((m) => field.invalid(childPath(path, 'port'), port.port, m)));
    if (endPort !== undefined) {
      if (endPort < port.port) out.push(field.invalid(childPath(path, 'endPort'), endPort, 'must be greater than or equal to `port`'));
      out.push(...isValidPortNum(endPort).map((m) => field.invalid(childPath(path, 'endPort'), endPort, m)));
    }
  } else if (typeof port.port === 'string') {
    if (endPort !== undefined) out.push(field.invalid(childPath(path, 'endPort'), endPort, 'may not be specified when `port` is non-numeric'));
    out.push(...isValidPortName(port.port).map((m) => field.invalid(childPath(path, 'port'), port.port, m)));
  } else if (endPort !== undefined) {
    out.push(field.invalid(childPath(path, 'endPort'), endPort, 'may not be specified when `port` is not specified'));
  }
  return out;
}

function validateIPBlock(block: Record<string, unknown>, path: string, existing: ReadonlySet<string>): StatusCause[] {
  const cidrText = str(block.cidr);
  if (!cidrText) return [field.required(childPath(path, 'cidr'))];
  const out: StatusCause[] = [];
  // An invalid CIDR already stored stays acceptable, as upstream keeps old objects updatable.
  const valid = (text: string, p: string) => {
    if (existing.has(text) || parseCidr(text)) return;
    out.push(field.invalid(p, text, INVALID_CIDR_MESSAGE));
  };
  valid(cidrText, childPath(path, 'cidr'));
  const outer = parseCidr(cidrText);
  if (!outer) return out;
  arr(block.except).forEach((e, i) => {
    const p = indexPath(childPath(path, 'except'), i);
    const text = str(e);
    valid(text, p);
    const inner = parseCidr(text);
    if (inner && !isStrictSubset(inner, outer)) out.push(field.invalid(p, text, 'must be a strict subset of `cidr`'));
  });
  return out;
}

function validatePeer(peer: Record<string, unknown>, path: string, existing: ReadonlySet<string>): StatusCause[] {
  const out: StatusCause[] = [];
  let peers = 0;
  for (const key of ['podSelector', 'namespaceSelector']) {
    if (peer[key] === undefined || peer[key] === null) continue;
    peers++;
    out.push(...validateLabelSelectorObject(peer[key], childPath(path, key)));
  }
  const hasBlock = isObject(peer.ipBlock);
  if (hasBlock) {
    peers++;
    out.push(...validateIPBlock(obj(peer.ipBlock), childPath(path, 'ipBlock'), existing));
  }
  if (peers === 0) out.push(field.required(path, 'must specify a peer'));
  else if (peers > 1 && hasBlock) out.push(field.forbidden(path, 'may not specify both ipBlock and another peer'));
  return out;
}

function cidrsOf(o: KubeObject | undefined): Set<string> {
  const out = new Set<string>();
  if (!o) return out;
  const spec = obj(o.spec);
  const peers = [...arr(spec.ingress).flatMap((r) => arr(obj(r).from)), ...arr(spec.egress).flatMap((r) => arr(obj(r).to))];
  for (const p of peers) {
    const block = obj(obj(p).ipBlock);
    if (typeof block.cidr === 'string') out.add(block.cidr);
    for (const e of arr(block.except)) if (typeof e === 'string') out.add(e);
  }
  return out;
}

function validateNetworkPolicy(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  const existing = cidrsOf(old);
  out.push(...validateLabelSelectorObject(spec.podSelector, 'spec.podSelector'));
  const rules = (key: 'ingress' | 'egress', peersKey: 'from' | 'to') => {
    arr(spec[key]).forEach((r, i) => {
      const rule = obj(r);
      const rulePath = indexPath(`spec.${key}`, i);
      arr(rule.ports).forEach((p, j) => out.push(...validatePort(obj(p), indexPath(childPath(rulePath, 'ports'), j))));
      arr(rule[peersKey]).forEach((p, j) => out.push(...validatePeer(obj(p), indexPath(childPath(rulePath, peersKey), j), existing)));
    });
  };
  rules('ingress', 'from');
  rules('egress', 'to');
  const types = arr(spec.policyTypes).map(str);
  if (types.length > POLICY_TYPES.length) {
    out.push(invalidRendered('spec.policyTypes', goStringSlice(types).replace('[]string', '[]networking.PolicyType'), 'may not specify more than two policyTypes'));
    return out;
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) out.push(field.notSupported(indexPath('spec.policyTypes', i), t, POLICY_TYPES));
  });
  return out;
}

export const networkPolicyResource: ResourceType = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'networkpolicies',
  kind: 'NetworkPolicy',
  listKind: 'NetworkPolicyList',
  singular: 'networkpolicy',
  namespaced: true,
  shortNames: ['netpol'],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Pod-Selector', 'string', 'podSelector selects the pods to which this NetworkPolicy object applies.'), ageColumn],
    cells: (o, now) => [o.metadata?.name ?? '', formatLabelSelector(obj(o.spec).podSelector), age(o, now)],
  },
  hasGeneration: true,
  defaults: defaultNetworkPolicy,
  validate: validateNetworkPolicy,
};
