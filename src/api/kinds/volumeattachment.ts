// storage.k8s.io/v1 VolumeAttachment: the wish to attach a volume to a node, for the external attacher.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { isObject, obj, semanticEqual, str, strMap } from './json.js';
import { validatePersistentVolumeSpec } from './persistentvolume.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

const MAX_METADATA_SIZE = 256 * 1024;
const MAX_ERROR_MESSAGE_SIZE = 1024;

function validateSource(source: Record<string, unknown>, path: string): StatusCause[] {
  const hasName = typeof source.persistentVolumeName === 'string';
  const hasInline = isObject(source.inlineVolumeSpec);
  const exactlyOne = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';
  if (!hasName && !hasInline) return [field.required(path, exactlyOne)];
  if (hasName && hasInline) return [field.forbidden(path, exactlyOne)];
  if (hasName) return source.persistentVolumeName === '' ? [field.required(childPath(path, 'persistentVolumeName'), 'must specify non empty persistentVolumeName')] : [];
  return validatePersistentVolumeSpec(source.inlineVolumeSpec as Record<string, unknown>, childPath(path, 'inlineVolumeSpec'), true);
}

function validateStatus(status: Record<string, unknown>): StatusCause[] {
  const out: StatusCause[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(strMap(status.attachmentMetadata))) size += k.length + v.length;
  if (size > MAX_METADATA_SIZE) out.push(field.tooLong('status.attachmentMetadata', '', MAX_METADATA_SIZE));
  for (const key of ['attachError', 'detachError']) {
    if (str(obj(status[key]).message).length > MAX_ERROR_MESSAGE_SIZE) out.push(field.tooLong(`status.${key}.message`, '', MAX_ERROR_MESSAGE_SIZE));
  }
  return out;
}

function validateVolumeAttachment(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  if (!str(spec.attacher)) out.push(field.required('spec.attacher'));
  out.push(...validateSource(obj(spec.source), 'spec.source'));
  const nodeName = str(spec.nodeName);
  out.push(...nameIsDNSSubdomain(nodeName, false).map((m) => field.invalid('spec.nodeName', nodeName, m)));
  out.push(...validateStatus(obj(o.status)));
  // Only the status changes once created: the attacher acts on the spec it first saw.
  if (old && !semanticEqual(o.spec, old.spec)) out.push(field.invalid('spec', '', 'field is immutable'));
  return out;
}

export const volumeAttachmentResource: ResourceType = {
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'volumeattachments',
  kind: 'VolumeAttachment',
  listKind: 'VolumeAttachmentList',
  singular: 'volumeattachment',
  namespaced: false,
  shortNames: [],
  categories: [],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Attacher', 'string', 'attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().', 0, 'name'),
      column('PV', 'string', 'persistentVolumeName represents the name of the persistent volume to attach.'),
      column('Node', 'string', 'nodeName represents the node that the volume should be attached to.'),
      column('Attached', 'boolean', 'attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.'),
      ageColumn,
    ],
    cells: (o, now) => {
      const spec = obj(o.spec);
      return [o.metadata?.name ?? '', str(spec.attacher), str(obj(spec.source).persistentVolumeName), str(spec.nodeName), obj(o.status).attached === true, age(o, now)];
    },
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateVolumeAttachment,
};
