// core/v1 ConfigMap.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { isConfigMapKey, keyPath, nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { isObject, obj, semanticEqual } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface ConfigMap extends KubeObject {
  metadata: ObjectMeta;
  data?: Record<string, string>;
  /** Base64-encoded on the wire. */
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

/** Data of a ConfigMap or Secret may total at most 1 MiB. */
export const MAX_DATA_SIZE = 1024 * 1024;

/** Whether a string is standard base64, as Go's decoder accepts it. */
export function base64Error(input: unknown): string | undefined {
  if (typeof input !== 'string') return 'must be a base64-encoded string';
  // Go's decoder skips line breaks (wrapped base64, YAML block scalars).
  const v = input.replace(/[\r\n]/g, '');
  const bad = v.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return `illegal base64 data at input byte ${bad}`;
  const pad = v.indexOf('=');
  if (pad >= 0 && (!/^=*$/.test(v.slice(pad)) || v.length - pad > 2)) return `illegal base64 data at input byte ${pad}`;
  if (v.length % 4 !== 0) return `illegal base64 data at input byte ${v.length - (v.length % 4)}`;
  return undefined;
}

/** Rules shared with Secret for `immutable: true` objects. */
export function validateImmutableData(o: KubeObject, old: KubeObject, dataFields: string[]): StatusCause[] {
  const out: StatusCause[] = [];
  if (old.immutable !== true) return out;
  if (o.immutable !== true) out.push(field.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of dataFields) {
    if (!semanticEqual(o[f], old[f])) out.push(field.forbidden(f, 'field is immutable when `immutable` is set'));
  }
  return out;
}

function validateConfigMap(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  if (old) out.push(...validateImmutableData(o, old, ['data', 'binaryData']));
  const data = obj(o.data);
  const binary = obj(o.binaryData);
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    out.push(...isConfigMapKey(k).map((m) => field.invalid(keyPath('data', k), k, m)));
    if (k in binary) out.push(field.invalid(keyPath('data', k), k, 'duplicate of key present in binaryData'));
    if (typeof v !== 'string') out.push(field.typeInvalid(keyPath('data', k), v, 'must be a string'));
    else size += Buffer.byteLength(v);
  }
  for (const [k, v] of Object.entries(binary)) {
    out.push(...isConfigMapKey(k).map((m) => field.invalid(keyPath('binaryData', k), k, m)));
    const err = base64Error(v);
    if (err) out.push(field.invalid(keyPath('binaryData', k), '<binary data>', err));
    else size += Buffer.from(v as string, 'base64').length;
  }
  if (size > MAX_DATA_SIZE) out.push(field.tooLong('', '', MAX_DATA_SIZE));
  if (o.immutable !== undefined && o.immutable !== null && typeof o.immutable !== 'boolean') {
    out.push(field.typeInvalid('immutable', o.immutable, 'must be a boolean'));
  }
  return out;
}

export const configMapResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Data', 'string', 'Number of entries in data and binaryData.'), column('Age', 'string', 'Time since the object was created.')],
    cells: (o, now) => [
      o.metadata?.name ?? '',
      (isObject(o.data) ? Object.keys(o.data).length : 0) + (isObject(o.binaryData) ? Object.keys(o.binaryData).length : 0),
      age(o, now),
    ],
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateConfigMap,
};
