// networking.k8s.io/v1 IngressClass: which controller serves the Ingresses that name it.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { childPath, nameIsDNSLabel, nameIsDNSSubdomain, validateDomainPrefixedPath, validateImmutable, validateMeta } from '../validation.js';
import { isObject, obj, str } from './json.js';
import { validateTypedReference } from './ingress.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

const MAX_CONTROLLER_LENGTH = 250;
const SCOPES = ['Cluster', 'Namespace'];

function defaultIngressClass(o: KubeObject): void {
  const params = obj(o.spec).parameters;
  if (isObject(params) && (params.scope === undefined || params.scope === null)) params.scope = 'Cluster';
}

function validateParameters(params: Record<string, unknown>, path: string): StatusCause[] {
  const out = validateTypedReference(params, path);
  if (typeof params.scope !== 'string') {
    out.push(field.required(childPath(path, 'scope')));
    return out;
  }
  const scope = params.scope;
  if (!SCOPES.includes(scope)) {
    out.push(field.notSupported(childPath(path, 'scope'), scope, SCOPES));
    return out;
  }
  const hasNamespace = typeof params.namespace === 'string';
  if (scope === 'Namespace') {
    if (!hasNamespace) out.push(field.required(childPath(path, 'namespace'), "`parameters.scope` is set to 'Namespace'"));
    else out.push(...nameIsDNSLabel(params.namespace as string, false).map((m) => field.invalid(childPath(path, 'namespace'), params.namespace, m)));
  }
  if (scope === 'Cluster' && hasNamespace) out.push(field.forbidden(childPath(path, 'namespace'), "`parameters.scope` is set to 'Cluster'"));
  return out;
}

function validateIngressClass(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  const controller = str(spec.controller);
  if (old) out.push(...validateImmutable(controller, str(obj(old.spec).controller), 'spec.controller'));
  if (!controller) out.push(field.required('spec.controller'));
  else {
    if (controller.length > MAX_CONTROLLER_LENGTH) out.push(field.tooLong('spec.controller', '', MAX_CONTROLLER_LENGTH));
    out.push(...validateDomainPrefixedPath(controller, 'spec.controller'));
  }
  if (isObject(spec.parameters)) out.push(...validateParameters(spec.parameters, 'spec.parameters'));
  return out;
}

/** Upstream's Parameters cell: Kind[.apiGroup]/name, "<none>" when unset. */
function parametersText(params: unknown): string {
  if (!isObject(params)) return '<none>';
  const group = typeof params.apiGroup === 'string' ? `.${params.apiGroup}` : '';
  return `${str(params.kind)}${group}/${str(params.name)}`;
}

export const ingressClassResource: ResourceType = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingressclasses',
  kind: 'IngressClass',
  listKind: 'IngressClassList',
  singular: 'ingressclass',
  namespaced: false,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Controller', 'string', 'Controller that is responsible for handling this class'),
      column('Parameters', 'string', 'A reference to a resource with additional parameters'),
      ageColumn,
    ],
    cells: (o, now) => [o.metadata?.name ?? '', str(obj(o.spec).controller), parametersText(obj(o.spec).parameters), age(o, now)],
  },
  hasGeneration: true,
  defaults: defaultIngressClass,
  validate: validateIngressClass,
};
