// core/v1 Namespace.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { indexPath, isQualifiedName, nameIsDNSLabel, validateMeta } from '../validation.js';
import { arr, child, isObject, obj, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export const METADATA_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Neither being deleted nor Terminating: a namespace that takes new content. */
export function isNamespaceActive(ns: KubeObject): boolean {
  return !ns.metadata.deletionTimestamp && (ns.status as { phase?: string } | undefined)?.phase !== 'Terminating';
}

export interface NamespaceSpec {
  finalizers?: string[];
}

export interface NamespaceStatus {
  phase?: 'Active' | 'Terminating';
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
}

export interface Namespace extends KubeObject {
  metadata: ObjectMeta;
  spec?: NamespaceSpec;
  status?: NamespaceStatus;
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

// Every named namespace carries its own name as a label, so namespace selectors can pick it.
function setNameLabel(o: KubeObject): void {
  const name = o.metadata?.name;
  if (!name) return;
  o.metadata.labels = { ...(o.metadata.labels ?? {}), [METADATA_NAME_LABEL]: name };
}

function defaultNamespace(o: KubeObject): void {
  setNameLabel(o);
  const status = child(o, 'status');
  if (!status.phase) status.phase = 'Active';
}

function prepareForCreate(o: KubeObject): void {
  o.status = { phase: 'Active' };
  const spec = child(o, 'spec');
  const finalizers = arr(spec.finalizers).map(str);
  if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
  setNameLabel(o);
}

// spec.finalizers only change through the finalize subresource; a plain update keeps the old list.
function prepareForUpdate(o: KubeObject, old: KubeObject): void {
  const oldSpec = obj(old.spec);
  const spec = child(o, 'spec');
  if (oldSpec.finalizers === undefined) delete spec.finalizers;
  else spec.finalizers = oldSpec.finalizers;
  setNameLabel(o);
}

function validateNamespace(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSLabel);
  arr(obj(o.spec).finalizers).forEach((f, i) => {
    const name = str(f);
    const p = indexPath('spec.finalizers', i);
    out.push(...isQualifiedName(name).map((m) => field.invalid(p, name, m)));
    if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
      out.push(field.invalid(p, name, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  if (isObject(o.status)) {
    const phase = str(o.status.phase);
    if (phase && phase !== 'Active' && phase !== 'Terminating') out.push(field.notSupported('status.phase', phase, ['Active', 'Terminating']));
  }
  return out;
}

/** NamespaceLifecycle admission: the namespaces a cluster cannot work without are never deleted. */
const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

function refuseDelete(o: KubeObject): string | undefined {
  return IMMORTAL.has(o.metadata.name ?? '') ? 'this namespace may not be deleted' : undefined;
}

export const namespaceResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  singular: 'namespace',
  namespaced: false,
  shortNames: ['ns'],
  categories: [],
  // finalize: the namespace controller clears spec.finalizers through it once the content is gone.
  subresources: ['status', 'finalize'],
  fieldSelectors: {
    'status.phase': (o) => str(obj(o.status).phase),
  },
  table: {
    columns: [nameColumn, column('Status', 'string', 'Phase of the namespace: Active or Terminating.'), column('Age', 'string', 'Time since the object was created.')],
    cells: (o, now) => [o.metadata?.name ?? '', str(obj(o.status).phase), age(o, now)],
  },
  hasGeneration: false,
  defaults: defaultNamespace,
  validate: validateNamespace,
  prepareForCreate,
  prepareForUpdate,
  refuseDelete,
  returnsDeletedObject: true,
  // A deleted namespace waits, Terminating, until its content is gone and its finalizers cleared.
  prepareForDeletion: (o) => {
    o.status = { ...obj(o.status), phase: 'Terminating' };
  },
  extraFinalizers: (o) => arr(obj(o.spec).finalizers).map(str),
};
