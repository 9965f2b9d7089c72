// core/v1 ServiceAccount: stored for the manifests and charts that create them, and one named
// "default" in every namespace. Their tokens come from TokenRequest and the legacy token-Secret
// controller (see docs/reference/security.md).
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { arr } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface ServiceAccount extends KubeObject {
  metadata: ObjectMeta;
  secrets?: { name?: string; namespace?: string; kind?: string; apiVersion?: string; uid?: string }[];
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}

function validateServiceAccount(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  return validateMeta(o, old, true, nameIsDNSSubdomain);
}

export const serviceAccountResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  singular: 'serviceaccount',
  namespaced: true,
  shortNames: ['sa'],
  categories: [],
  subresources: ['token'],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Secrets', 'string', 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.'), column('Age', 'string', 'Time since the object was created.')],
    cells: (o, now) => [o.metadata?.name ?? '', arr((o as ServiceAccount).secrets).length, age(o, now)],
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateServiceAccount,
};
