// core/v1 PersistentVolume: a piece of storage claims bind to. Defaults, validation and the table
// as upstream; the volume binding controller (src/controllers/) moves its phase.
import { posix } from 'node:path';
import { field } from '../errors.js';
import { quantityErrors, quantitySign, quantityText } from '../quantity.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { rfc3339 } from '../../util/time.js';
import { childPath, isDNS1123Subdomain, keyPath, nameIsDNSSubdomain, notSupportedRendered, validateImmutable, validateMeta, validateObjectMetaUpdate } from '../validation.js';
import { arr, child, isObject, obj, semanticEqual, str } from './json.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
export const VOLUME_MODES = ['Block', 'Filesystem'];
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
/** The storage class annotation that came before spec.storageClassName, still read first. */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** The volume sources of a PersistentVolumeSpec, in the order upstream checks them. */
export const PERSISTENT_VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'glusterfs', 'flocker', 'nfs', 'rbd', 'quobyte', 'cephfs', 'iscsi', 'cinder',
  'fc', 'flexVolume', 'azureFile', 'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'scaleIO', 'local', 'storageos', 'csi',
];

/** Upstream GetAccessModesAsString: the short forms in a fixed order. */
export function accessModesText(modes: unknown): string {
  const set = new Set(arr(modes).map(str));
  const short: [string, string][] = [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']];
  return short.filter(([long]) => set.has(long)).map(([, s]) => s).join(',');
}

/** The class a volume or claim belongs to: the beta annotation first, then spec.storageClassName. */
export function storageClassOf(o: KubeObject): string {
  const annotation = o.metadata?.annotations?.[BETA_STORAGE_CLASS_ANNOTATION];
  if (annotation !== undefined) return annotation;
  return str(obj(o.spec).storageClassName);
}

/** Access modes: known values, and ReadWriteOncePod alone. Shared with claims. */
export function validateAccessModes(modes: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  let rwop = false;
  let other = false;
  for (const m of arr(modes)) {
    const mode = str(m);
    if (!ACCESS_MODES.includes(mode)) out.push(field.notSupported(path, mode, ACCESS_MODES));
    else if (mode === 'ReadWriteOncePod') rwop = true;
    else other = true;
  }
  if (rwop && other) out.push(field.forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return out;
}

/** A storage quantity that must be well-formed and above zero (capacity, requests.storage). */
export function validatePositiveQuantity(q: unknown, path: string): StatusCause[] {
  const errs = quantityErrors(q);
  if (errs.length > 0) return errs.map((m) => field.invalid(path, quantityText(q), m));
  return quantitySign(quantityText(q)) > 0 ? [] : [field.invalid(path, quantityText(q), 'must be greater than zero')];
}

function noBacksteps(p: string, path: string): StatusCause[] {
  return p.split('/').includes('..') ? [field.invalid(path, p, "must not contain '..'")] : [];
}

function validateSource(name: string, src: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  switch (name) {
    case 'hostPath': {
      const p = str(src.path);
      if (!p) return [field.required(childPath(path, 'path'))];
      out.push(...noBacksteps(p, childPath(path, 'path')));
      if (typeof src.type === 'string' && !HOST_PATH_TYPES.includes(src.type)) out.push(field.notSupported(childPath(path, 'type'), src.type, HOST_PATH_TYPES));
      break;
    }
    case 'nfs': {
      if (!str(src.server)) out.push(field.required(childPath(path, 'server')));
      const p = str(src.path);
      if (!p) out.push(field.required(childPath(path, 'path')));
      if (!p.startsWith('/')) out.push(field.invalid(childPath(path, 'path'), p, 'must be an absolute path'));
      break;
    }
    case 'local': {
      const p = str(src.path);
      if (!p) return [field.required(childPath(path, 'path'))];
      out.push(...noBacksteps(p, childPath(path, 'path')));
      break;
    }
    case 'csi': {
      out.push(...validateCSIDriverName(str(src.driver), childPath(path, 'driver')));
      if (!str(src.volumeHandle)) out.push(field.required(childPath(path, 'volumeHandle')));
      break;
    }
  }
  return out;
}

/** Upstream ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain once lower-cased. */
export function validateCSIDriverName(name: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!name) out.push(field.required(path));
  if (name.length > 63) out.push(field.tooLong(path, name, 63));
  out.push(...isDNS1123Subdomain(name.toLowerCase()).map((m) => field.invalid(path, name, m)));
  return out;
}

/** Upstream ValidatePersistentVolumeSpec; `inline` for a VolumeAttachment's inlineVolumeSpec. */
export function validatePersistentVolumeSpec(spec: Record<string, unknown>, path: string, inline: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  if (!inline && arr(spec.accessModes).length === 0) out.push(field.required(childPath(path, 'accessModes')));
  out.push(...validateAccessModes(spec.accessModes, childPath(path, 'accessModes')));
  if (!inline) {
    const capacity = obj(spec.capacity);
    const names = Object.keys(capacity);
    if (names.length === 0) out.push(field.required(childPath(path, 'capacity')));
    if (!('storage' in capacity) || names.length > 1) {
      const rendered = `core.ResourceList{${names.sort().map((n) => `${JSON.stringify(n)}:${JSON.stringify(quantityText(capacity[n]))}`).join(', ')}}`;
      out.push(notSupportedRendered(childPath(path, 'capacity'), rendered, ['storage']));
    }
    for (const [n, q] of Object.entries(capacity)) out.push(...validatePositiveQuantity(q, keyPath(childPath(path, 'capacity'), n)));
  }
  const className = str(spec.storageClassName);
  if (className) out.push(...nameIsDNSSubdomain(className, false).map((m) => field.invalid(childPath(path, 'storageClassName'), className, m)));
  if (typeof spec.volumeMode === 'string' && !VOLUME_MODES.includes(spec.volumeMode)) out.push(field.notSupported(childPath(path, 'volumeMode'), spec.volumeMode, VOLUME_MODES));
  if (typeof spec.volumeAttributesClassName === 'string') {
    const vac = spec.volumeAttributesClassName;
    if (!vac) out.push(field.required(childPath(path, 'volumeAttributesClassName'), 'an empty string is disallowed'));
    else out.push(...nameIsDNSSubdomain(vac, false).map((m) => field.invalid(childPath(path, 'volumeAttributesClassName'), vac, m)));
    if (!isObject(spec.csi)) out.push(field.required(childPath(path, 'csi'), 'has to be specified when using volumeAttributesClassName'));
  }
  let volumes = 0;
  for (const name of PERSISTENT_VOLUME_SOURCES) {
    if (!isObject(spec[name])) continue;
    if (volumes > 0) out.push(field.forbidden(childPath(path, name), 'may not specify more than 1 volume type'));
    else {
      volumes++;
      out.push(...validateSource(name, spec[name] as Record<string, unknown>, childPath(path, name)));
    }
  }
  if (volumes === 0) out.push(field.required(path, 'must specify a volume type'));
  const hostPath = obj(spec.hostPath);
  const policy = str(spec.persistentVolumeReclaimPolicy);
  if (isObject(spec.hostPath) && posix.normalize(str(hostPath.path)).replace(/\/+$/, '') === '' && policy === 'Recycle') {
    out.push(field.forbidden(childPath(path, 'persistentVolumeReclaimPolicy'), "may not be 'recycle' for a hostPath mount of '/'"));
  }
  if (policy && !inline && !RECLAIM_POLICIES.includes(policy)) out.push(field.notSupported(childPath(path, 'persistentVolumeReclaimPolicy'), policy, RECLAIM_POLICIES));
  let hasAffinity = false;
  if (isObject(spec.nodeAffinity)) {
    hasAffinity = true;
    if (!isObject(spec.nodeAffinity.required)) out.push(field.required(childPath(path, 'nodeAffinity.required'), 'must specify required node constraints'));
  }
  if (isObject(spec.local) && !hasAffinity) out.push(field.required(childPath(path, 'nodeAffinity'), 'Local volume requires node affinity'));
  return out;
}

function sourceOf(spec: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of PERSISTENT_VOLUME_SOURCES) if (spec[name] !== undefined) out[name] = spec[name];
  return out;
}

function validatePersistentVolume(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validatePersistentVolumeSpec(spec, 'spec', false));
  if (old) {
    const oldSpec = obj(old.spec);
    if (!semanticEqual(sourceOf(spec), sourceOf(oldSpec))) {
      out.push(field.forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'));
    }
    out.push(...validateImmutable(spec.volumeMode, oldSpec.volumeMode, 'volumeMode'));
    if (isObject(oldSpec.nodeAffinity)) out.push(...validateImmutable(spec.nodeAffinity, oldSpec.nodeAffinity, 'nodeAffinity'));
  }
  return out;
}

function validatePersistentVolumeStatusUpdate(o: KubeObject, old: KubeObject): StatusCause[] {
  return validateObjectMetaUpdate(o.metadata, old.metadata);
}

function defaultPersistentVolume(o: KubeObject): void {
  const spec = child(o, 'spec');
  // Manually created volumes keep their data when released (dynamically provisioned ones get their class's policy).
  if (!spec.persistentVolumeReclaimPolicy) spec.persistentVolumeReclaimPolicy = 'Retain';
  if (spec.volumeMode === undefined || spec.volumeMode === null) spec.volumeMode = 'Filesystem';
}

/** A new volume is Pending, stamped with the moment (upstream PrepareForCreate). */
function prepareForCreate(o: KubeObject): void {
  o.status = { phase: 'Pending', lastPhaseTransitionTime: rfc3339(Date.now()) };
}

export const persistentVolumeResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumes',
  kind: 'PersistentVolume',
  listKind: 'PersistentVolumeList',
  singular: 'persistentvolume',
  namespaced: false,
  shortNames: ['pv'],
  categories: [],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Capacity', 'string', 'capacity is the description of the persistent volume\'s resources and capacity.'),
      column('Access Modes', 'string', 'accessModes contains all ways the volume can be mounted.'),
      column('Reclaim Policy', 'string', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.'),
      column('Status', 'string', 'phase indicates if a volume is available, bound to a claim, or released by a claim.'),
      column('Claim', 'string', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.'),
      column('StorageClass', 'string', 'StorageClass of the pv'),
      column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
      column('Reason', 'string', 'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.'),
      ageColumn,
      column('VolumeMode', 'string', 'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.', 1),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const claimRef = isObject(spec.claimRef) ? `${str(spec.claimRef.namespace)}/${str(spec.claimRef.name)}` : '';
      const phase = o.metadata?.deletionTimestamp ? 'Terminating' : str(status.phase);
      const vac = typeof spec.volumeAttributesClassName === 'string' && spec.volumeAttributesClassName ? spec.volumeAttributesClassName : '<unset>';
      const mode = typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>';
      return [
        o.metadata?.name ?? '',
        quantityText(obj(spec.capacity).storage) || '0',
        accessModesText(spec.accessModes),
        str(spec.persistentVolumeReclaimPolicy),
        phase,
        claimRef,
        storageClassOf(o),
        vac,
        str(status.reason),
        age(o, now),
        mode,
      ];
    },
  },
  hasGeneration: false,
  defaults: defaultPersistentVolume,
  validate: validatePersistentVolume,
  validateStatusUpdate: validatePersistentVolumeStatusUpdate,
  prepareForCreate,
};

/** The volume source a PersistentVolume's spec names (hostPath, csi, ...), if any. */
export function persistentVolumeSource(spec: Record<string, unknown>): string | undefined {
  return PERSISTENT_VOLUME_SOURCES.find((n) => spec[n] !== undefined);
}
