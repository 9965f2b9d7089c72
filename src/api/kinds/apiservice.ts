// apiregistration.k8s.io/v1 APIService: which server answers a group-version. A local one (no
// spec.service) is served by this API server itself; any other is proxied to its Service by the
// aggregation layer (src/apiserver/aggregator/). The name must be `<version>.<group>` so two
// registrations of one group-version cannot exist.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { isDNS1035Label, isDNS1123Subdomain, validateMeta, validateObjectMetaUpdate, pathSegmentName } from '../validation.js';
import { bool, isObject, obj, objArr, optNum, str } from './json.js';
import { age, column, nameColumn } from './printing.js';
import { rfc3339 } from '../../util/time.js';

export const APIREGISTRATION_GROUP = 'apiregistration.k8s.io';
/** The port an APIService's Service is called on when it names none (upstream's default). */
export const DEFAULT_SERVICE_PORT = 443;

export interface ServiceReference {
  namespace?: string;
  name?: string;
  port?: number;
}

export interface APIServiceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface APIServiceSpec {
  service?: ServiceReference | null;
  group?: string;
  version?: string;
  insecureSkipTLSVerify?: boolean;
  /** PEM bundle, base64 in JSON (a Go []byte). */
  caBundle?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
}

export interface APIService extends KubeObject {
  metadata: ObjectMeta;
  spec?: APIServiceSpec;
  status?: { conditions?: APIServiceCondition[] };
}

export const AVAILABLE_CONDITION = 'Available';

/** The condition a local APIService is created with: this server is always there to answer. */
export function localAvailableCondition(now: string): APIServiceCondition {
  return { type: AVAILABLE_CONDITION, status: 'True', lastTransitionTime: now, reason: 'Local', message: 'Local APIServices are always available' };
}

export function availableCondition(o: KubeObject): APIServiceCondition | undefined {
  return objArr(obj(o.status).conditions).find((c) => c.type === AVAILABLE_CONDITION) as APIServiceCondition | undefined;
}

export function isLocal(o: APIService): boolean {
  return !isObject(o.spec?.service);
}

/** The decoded length of a base64 caBundle; undefined when it is not base64. */
function caBundleBytes(v: unknown): number | undefined {
  if (typeof v !== 'string') return v === undefined || v === null ? 0 : undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) return undefined;
  return Buffer.from(v, 'base64').length;
}

function validateAPIService(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const spec = obj(o.spec);
  const group = str(spec.group);
  const version = str(spec.version);
  const requiredName = `${version}.${group}`;
  const nameRule = (name: string, prefix: boolean): string[] => {
    const minimal = pathSegmentName(name, prefix);
    if (minimal.length > 0) return minimal;
    return name === requiredName ? [] : [`must be \`spec.version+"."+spec.group\`: ${JSON.stringify(requiredName)}`];
  };
  const out = validateMeta(o, undefined, false, nameRule);
  if (old) out.push(...validateObjectMetaUpdate(o.metadata, old.metadata));
  if (group === '' && version !== 'v1') out.push(field.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const e of isDNS1123Subdomain(group)) out.push(field.invalid('spec.group', group, e));
  for (const e of isDNS1035Label(version)) out.push(field.invalid('spec.version', version, e));
  const groupPriority = optNum(spec.groupPriorityMinimum) ?? 0;
  if (groupPriority <= 0 || groupPriority > 20000) out.push(field.invalid('spec.groupPriorityMinimum', groupPriority, 'must be positive and less than 20000'));
  const versionPriority = optNum(spec.versionPriority) ?? 0;
  if (versionPriority <= 0 || versionPriority > 1000) out.push(field.invalid('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
  const caBytes = caBundleBytes(spec.caBundle);
  if (caBytes === undefined) out.push(field.invalid('spec.caBundle', spec.caBundle, 'must be base64-encoded PEM data'));
  const insecure = bool(spec.insecureSkipTLSVerify);
  if (!isObject(spec.service)) {
    if (caBytes) out.push(field.invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (insecure) out.push(field.invalid('spec.insecureSkipTLSVerify', insecure, 'local APIServices may not have insecureSkipTLSVerify'));
    return out;
  }
  const service = spec.service;
  if (!str(service.namespace)) out.push(field.required('spec.service.namespace'));
  if (!str(service.name)) out.push(field.required('spec.service.name'));
  const port = optNum(service.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) out.push(field.invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (insecure && caBytes) out.push(field.invalid('spec.insecureSkipTLSVerify', insecure, 'may not be true if caBundle is present'));
  return out;
}

function validateAPIServiceStatus(o: KubeObject, old: KubeObject): StatusCause[] {
  const out = validateObjectMetaUpdate(o.metadata, old.metadata);
  objArr(obj(o.status).conditions).forEach((c, i) => {
    if (c.status !== 'True' && c.status !== 'False' && c.status !== 'Unknown') out.push(field.notSupported(`status.conditions[${i}].status`, c.status, ['True', 'False', 'Unknown']));
  });
  return out;
}

/** What `kubectl get apiservices` shows as AVAILABLE: True, or the status with its reason. */
function availableCell(o: KubeObject): string {
  const c = availableCondition(o);
  if (!c) return 'Unknown';
  if (c.status === 'True' || !c.reason) return str(c.status);
  return `${str(c.status)} (${c.reason})`;
}

export const apiServiceResource: ResourceType = {
  group: APIREGISTRATION_GROUP,
  version: 'v1',
  resource: 'apiservices',
  kind: 'APIService',
  listKind: 'APIServiceList',
  singular: 'apiservice',
  namespaced: false,
  shortNames: [],
  categories: ['api-extensions'],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
      column('Available', 'string', 'Whether this service is available.'),
      column('Age', 'string', 'CreationTimestamp is a timestamp representing the server time when this object was created.'),
    ],
    cells: (o, now) => {
      const service = obj(o.spec).service;
      return [o.metadata?.name ?? '', isObject(service) ? `${str(service.namespace)}/${str(service.name)}` : 'Local', availableCell(o), age(o, now)];
    },
  },
  hasGeneration: false,
  defaults: (o) => {
    const service = obj(o.spec).service;
    if (isObject(service) && service.port === undefined) service.port = DEFAULT_SERVICE_PORT;
  },
  // As upstream's strategy: a new object's status is the server's to set, and a local one is available at once.
  prepareForCreate: (o) => {
    if (!isObject(obj(o.spec).service)) o.status = { conditions: [localAvailableCondition(rfc3339(Date.now()))] };
  },
  validate: validateAPIService,
  validateStatusUpdate: validateAPIServiceStatus,
};

/** The caBundle (base64 PEM) an APIService trusts its server's certificate with, if any. */
export function caBundleOf(o: APIService): string | undefined {
  return typeof o.spec?.caBundle === 'string' && o.spec.caBundle !== '' ? o.spec.caBundle : undefined;
}
