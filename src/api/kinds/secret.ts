// core/v1 Secret.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { childPath, isConfigMapKey, keyPath, nameIsDNSSubdomain, validateImmutable, validateMeta } from '../validation.js';
import { base64Error, MAX_DATA_SIZE, validateImmutableData } from './configmap.js';
import { isObject, obj, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface Secret extends KubeObject {
  metadata: ObjectMeta;
  type?: string;
  /** Base64-encoded on the wire. */
  data?: Record<string, string>;
  /** Write-only convenience: merged into data on write, never stored. */
  stringData?: Record<string, string>;
  immutable?: boolean;
}

// stringData is folded into data the way upstream's v1 conversion does (stringData wins).
function defaultSecret(o: KubeObject): void {
  if (!o.type) o.type = 'Opaque';
  if (isObject(o.stringData)) {
    const data: Record<string, unknown> = isObject(o.data) ? o.data : {};
    for (const [k, v] of Object.entries(o.stringData)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
    o.data = data;
  }
  delete o.stringData;
}

const REDACTED = '<secret contents redacted>';

function validateSecret(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  if (old) {
    out.push(...validateImmutable(str(o.type), str(old.type), 'type', (v) => JSON.stringify(v)));
    out.push(...validateImmutableData(o, old, ['data']));
  }
  const data = obj(o.data);
  const decoded: Record<string, Buffer> = {};
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    out.push(...isConfigMapKey(k).map((m) => field.invalid(keyPath('data', k), k, m)));
    const err = base64Error(v);
    if (err) {
      out.push(field.invalid(keyPath('data', k), REDACTED, err));
      continue;
    }
    decoded[k] = Buffer.from(v as string, 'base64');
    size += decoded[k]!.length;
  }
  if (size > MAX_DATA_SIZE) out.push(field.tooLong('data', '', MAX_DATA_SIZE));

  const required = (key: string) => {
    if (!(key in data)) out.push(field.required(keyPath('data', key)));
  };
  switch (str(o.type)) {
    case 'kubernetes.io/service-account-token':
      if (!o.metadata?.annotations?.['kubernetes.io/service-account.name']) {
        out.push(field.required(keyPath(childPath('metadata', 'annotations'), 'kubernetes.io/service-account.name')));
      }
      break;
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = str(o.type) === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!(key in data)) {
        out.push(field.required(keyPath('data', key)));
        break;
      }
      try {
        JSON.parse(decoded[key]?.toString('utf8') ?? '');
      } catch (e) {
        out.push(field.invalid(keyPath('data', key), REDACTED, (e as Error).message));
      }
      break;
    }
    case 'kubernetes.io/basic-auth':
      if (!('username' in data) && !('password' in data)) {
        required('username');
        required('password');
      }
      break;
    case 'kubernetes.io/ssh-auth':
      if (!decoded['ssh-privatekey']?.length) out.push(field.required(keyPath('data', 'ssh-privatekey')));
      break;
    case 'kubernetes.io/tls':
      required('tls.crt');
      required('tls.key');
      break;
    default:
      break;
  }
  return out;
}

export const secretResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'secrets',
  kind: 'Secret',
  listKind: 'SecretList',
  singular: 'secret',
  namespaced: true,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {
    type: (o) => str(o.type),
  },
  table: {
    columns: [
      nameColumn,
      column('Type', 'string', 'Type of the secret, e.g. Opaque or kubernetes.io/tls.'),
      column('Data', 'string', 'Number of entries in data.'),
      column('Age', 'string', 'Time since the object was created.'),
    ],
    cells: (o, now) => [o.metadata?.name ?? '', str(o.type), isObject(o.data) ? Object.keys(o.data).length : 0, age(o, now)],
  },
  hasGeneration: false,
  defaults: defaultSecret,
  validate: validateSecret,
};
