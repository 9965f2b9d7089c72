// coordination.k8s.io/v1 Lease (node heartbeats, leader election, API server identity).
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { obj, optNum, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** MicroTime, e.g. "2026-01-01T00:00:00.000000Z". */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

export interface Lease extends KubeObject {
  metadata: ObjectMeta;
  spec?: LeaseSpec;
}

function validateLease(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  const duration = optNum(spec.leaseDurationSeconds);
  if (duration !== undefined && duration <= 0) out.push(field.invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = optNum(spec.leaseTransitions);
  if (transitions !== undefined && transitions < 0) out.push(field.invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  const strategy = str(spec.strategy);
  if (strategy && strategy !== 'OldestEmulationVersion') out.push(field.notSupported('spec.strategy', strategy, ['OldestEmulationVersion']));
  if (str(spec.preferredHolder) && !strategy) out.push(field.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  return out;
}

export const leaseResource: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  kind: 'Lease',
  listKind: 'LeaseList',
  singular: 'lease',
  namespaced: true,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Holder', 'string', 'Identity of the current holder of the lease.'), column('Age', 'string', 'Time since the object was created.')],
    cells: (o, now) => [o.metadata?.name ?? '', str(obj(o.spec).holderIdentity), age(o, now)],
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateLease,
};
