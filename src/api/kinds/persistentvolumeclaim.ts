// core/v1 PersistentVolumeClaim: a request for storage, bound to a PersistentVolume by the volume
// binding controller. Defaults, validation and the table as upstream.
import { field } from '../errors.js';
import { validateLabelSelectorObject } from '../labels.js';
import { compareQuantities, isValidQuantity, quantityText } from '../quantity.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, keyPath, nameIsDNSSubdomain, validateImmutable, validateMeta, validateObjectMetaUpdate } from '../validation.js';
import { child, isObject, obj, semanticEqual, str } from './json.js';
import { VOLUME_MODES, accessModesText, storageClassOf, validateAccessModes, validatePositiveQuantity } from './persistentvolume.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

/** Upstream ValidatePersistentVolumeClaimSpec (also a StatefulSet's volumeClaimTemplates'). */
export function validateClaimSpec(spec: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) out.push(field.required(childPath(path, 'accessModes'), 'at least 1 access mode is required'));
  if (spec.selector !== undefined && spec.selector !== null) out.push(...validateLabelSelectorObject(spec.selector, childPath(path, 'selector')));
  out.push(...validateAccessModes(spec.accessModes, childPath(path, 'accessModes')));
  const requests = obj(obj(spec.resources).requests);
  const storagePath = keyPath(childPath(path, 'resources'), 'storage');
  if (!('storage' in requests)) out.push(field.required(storagePath));
  else out.push(...validatePositiveQuantity(requests.storage, storagePath));
  if (typeof spec.storageClassName === 'string' && spec.storageClassName) {
    const name = spec.storageClassName;
    out.push(...nameIsDNSSubdomain(name, false).map((m) => field.invalid(childPath(path, 'storageClassName'), name, m)));
  }
  if (typeof spec.volumeMode === 'string' && !VOLUME_MODES.includes(spec.volumeMode)) out.push(field.notSupported(childPath(path, 'volumeMode'), spec.volumeMode, VOLUME_MODES));
  if (typeof spec.volumeAttributesClassName === 'string' && spec.volumeAttributesClassName) {
    const name = spec.volumeAttributesClassName;
    out.push(...nameIsDNSSubdomain(name, false).map((m) => field.invalid(childPath(path, 'volumeAttributesClassName'), name, m)));
  }
  return out;
}

function storageRequest(o: KubeObject): string {
  return quantityText(obj(obj(obj(o.spec).resources).requests).storage);
}

function validateClaim(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateClaimSpec(spec, 'spec'));
  if (!old) return out;
  const oldSpec = obj(old.spec);
  // Claims are immutable (quota and limits are judged at create) except what binding and resizing change.
  const comparable = (s: Record<string, unknown>, bound: boolean, oldVolumeName: string) => {
    const copy: Record<string, unknown> = structuredClone(s);
    if (!oldVolumeName) delete copy.volumeName;
    if (bound && isObject(copy.resources) && isObject(copy.resources.requests)) delete copy.resources.requests.storage;
    delete copy.volumeAttributesClassName;
    return copy;
  };
  const bound = obj(o.status).phase === 'Bound';
  const oldVolumeName = str(oldSpec.volumeName);
  if (!semanticEqual(comparable(spec, bound, oldVolumeName), comparable(oldSpec, bound, oldVolumeName))) {
    out.push(field.forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  }
  const newSize = storageRequest(o);
  const oldSize = storageRequest(old);
  if (isValidQuantity(newSize) && isValidQuantity(oldSize) && compareQuantities(newSize, oldSize) < 0) {
    out.push(field.forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
  }
  out.push(...validateImmutable(spec.volumeMode, oldSpec.volumeMode, 'volumeMode'));
  return out;
}

function validateClaimStatusUpdate(o: KubeObject, old: KubeObject): StatusCause[] {
  const out = validateObjectMetaUpdate(o.metadata, old.metadata);
  out.push(...validateAccessModes(obj(o.status).accessModes, 'status.accessModes'));
  return out;
}

function defaultClaim(o: KubeObject): void {
  const spec = child(o, 'spec');
  if (spec.volumeMode === undefined || spec.volumeMode === null) spec.volumeMode = 'Filesystem';
}

export const persistentVolumeClaimResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  listKind: 'PersistentVolumeClaimList',
  singular: 'persistentvolumeclaim',
  namespaced: true,
  shortNames: ['pvc'],
  categories: [],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.'),
      column('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
      column('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.'),
      column('Access Modes', 'string', 'accessModes contains the actual access modes the volume backing the PVC has.'),
      column('StorageClass', 'string', 'StorageClass of the pvc'),
      column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
      ageColumn,
      column('VolumeMode', 'string', 'volumeMode defines what type of volume is required by the claim.', 1),
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const phase = o.metadata?.deletionTimestamp ? 'Terminating' : str(status.phase);
      const volumeName = str(spec.volumeName);
      // Capacity and modes are the bound volume's, so they show only once a volume is named.
      const capacity = volumeName ? quantityText(obj(status.capacity).storage) || '0' : '';
      const modes = volumeName ? accessModesText(status.accessModes) : '';
      const vac = typeof status.currentVolumeAttributesClassName === 'string' && status.currentVolumeAttributesClassName ? status.currentVolumeAttributesClassName : '<unset>';
      const mode = typeof spec.volumeMode === 'string' ? spec.volumeMode : '<unset>';
      return [o.metadata?.name ?? '', phase, volumeName, capacity, modes, storageClassOf(o), vac, age(o, now), mode];
    },
  },
  hasGeneration: false,
  defaults: defaultClaim,
  validate: validateClaim,
  validateStatusUpdate: validateClaimStatusUpdate,
  // A new claim waits for a volume: Pending whatever the client sent.
  prepareForCreate: (o) => {
    o.status = { phase: 'Pending' };
  },
};
