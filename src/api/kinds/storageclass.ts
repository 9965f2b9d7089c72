// storage.k8s.io/v1 StorageClass: a class of storage claims ask for. Its provisioner, parameters,
// reclaim policy and binding mode are fixed once created, as upstream.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, duplicateRendered, indexPath, isQualifiedName, nameIsDNSSubdomain, validateImmutable, validateLabelName, validateMeta } from '../validation.js';
import { arr, obj, semanticEqual, str, strMap } from './json.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';

export function isDefaultStorageClass(o: KubeObject): boolean {
  const a = o.metadata?.annotations ?? {};
  return a[DEFAULT_CLASS_ANNOTATION] === 'true' || a[BETA_DEFAULT_CLASS_ANNOTATION] === 'true';
}

function defaultStorageClass(o: KubeObject): void {
  if (!o.reclaimPolicy) o.reclaimPolicy = 'Delete';
  if (!o.volumeBindingMode) o.volumeBindingMode = 'Immediate';
}

function validateTopologies(terms: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const seen: Record<string, string[]>[] = [];
  arr(terms).forEach((t, i) => {
    const termPath = indexPath(path, i);
    const exprs: Record<string, string[]> = {};
    arr(obj(t).matchLabelExpressions).forEach((e, j) => {
      const req = obj(e);
      const reqPath = indexPath(childPath(termPath, 'matchLabelExpressions'), j);
      const key = str(req.key);
      out.push(...validateLabelName(key, childPath(reqPath, 'key')));
      const values = arr(req.values).map(str);
      if (values.length === 0) out.push(field.required(childPath(reqPath, 'values'), 'must specify as least one value'));
      const unique = new Set<string>();
      values.forEach((v, k) => {
        if (unique.has(v)) out.push(field.duplicate(indexPath(childPath(reqPath, 'values'), k), v));
        unique.add(v);
      });
      if (key in exprs) out.push(field.duplicate(childPath(reqPath, 'key'), key));
      exprs[key] = [...unique].sort();
    });
    if (seen.some((s) => semanticEqual(s, exprs))) out.push(duplicateRendered(childPath(termPath, 'matchLabelExpressions'), '""'));
    seen.push(exprs);
  });
  return out;
}

function validateStorageClass(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const provisioner = str(o.provisioner);
  if (!provisioner) out.push(field.required('provisioner'));
  else out.push(...isQualifiedName(provisioner.toLowerCase()).map((m) => field.invalid('provisioner', provisioner, m)));
  const params = strMap(o.parameters);
  let size = 0;
  if (Object.keys(params).length > MAX_PARAMETERS) out.push(field.tooLong('parameters', '', MAX_PARAMETERS));
  for (const [k, v] of Object.entries(params)) {
    if (k.length < 1) out.push(field.invalid('parameters', k, 'field can not be empty.'));
    size += k.length + v.length;
  }
  if (size > MAX_PARAMETERS_SIZE) out.push(field.tooLong('parameters', '', MAX_PARAMETERS_SIZE));
  const policy = str(o.reclaimPolicy);
  if (policy && !RECLAIM_POLICIES.includes(policy)) out.push(field.notSupported('reclaimPolicy', policy, RECLAIM_POLICIES));
  if (typeof o.volumeBindingMode !== 'string') out.push(field.required('volumeBindingMode'));
  else if (!BINDING_MODES.includes(o.volumeBindingMode)) out.push(field.notSupported('volumeBindingMode', o.volumeBindingMode, BINDING_MODES));
  out.push(...validateTopologies(o.allowedTopologies, 'allowedTopologies'));
  if (old) {
    if (!semanticEqual(o.parameters, old.parameters)) out.push(field.forbidden('parameters', 'updates to parameters are forbidden.'));
    if (provisioner !== str(old.provisioner)) out.push(field.forbidden('provisioner', 'updates to provisioner are forbidden.'));
    if (policy !== str(old.reclaimPolicy)) out.push(field.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
    out.push(...validateImmutable(o.volumeBindingMode, old.volumeBindingMode, 'volumeBindingMode'));
  }
  return out;
}

export const storageClassResource: ResourceType = {
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'storageclasses',
  kind: 'StorageClass',
  listKind: 'StorageClassList',
  singular: 'storageclass',
  namespaced: false,
  shortNames: ['sc'],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Provisioner', 'string', 'provisioner indicates the type of the provisioner.'),
      column('ReclaimPolicy', 'string', 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.'),
      column('VolumeBindingMode', 'string', 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.'),
      column('AllowVolumeExpansion', 'string', 'allowVolumeExpansion shows whether the storage class allow volume expand.'),
      ageColumn,
    ],
    cells: (o, now) => [
      `${o.metadata?.name ?? ''}${isDefaultStorageClass(o) ? ' (default)' : ''}`,
      str(o.provisioner),
      str(o.reclaimPolicy) || 'Delete',
      str(o.volumeBindingMode) || 'Immediate',
      o.allowVolumeExpansion === true,
      age(o, now),
    ],
  },
  hasGeneration: false,
  defaults: defaultStorageClass,
  validate: validateStorageClass,
};
