// apps/v1 ControllerRevision: an immutable snapshot of a controller's pod template. The DaemonSet
// controller keeps one per template it has run, and `kubectl rollout history|undo daemonset` read
// and re-apply them.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, OwnerReference, StatusCause } from '../types.js';
import { nameIsDNSSubdomain, validateImmutable, validateMeta, validateNonnegative } from '../validation.js';
import { age, column, nameColumn } from './printing.js';

export interface ControllerRevision extends KubeObject {
  metadata: ObjectMeta;
  /** Whatever the controller saves: the DaemonSet controller stores a strategic merge patch. */
  data?: unknown;
  revision?: number;
}

function validateControllerRevision(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const cr = o as ControllerRevision;
  if (cr.data === undefined || cr.data === null) out.push(field.required('data', 'data is mandatory'));
  const revision = cr.revision ?? 0;
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision)) out.push(field.invalid('revision', revision, 'must be an integer'));
  else out.push(...validateNonnegative(revision, 'revision'));
  if (old) out.push(...validateImmutable(cr.data, (old as ControllerRevision).data, 'data'));
  return out;
}

/** Upstream's "daemonset.apps/name": the controller's group kind in lower case, then its name. */
function controllerName(o: KubeObject): string {
  const ref = (o.metadata?.ownerReferences ?? []).find((r: OwnerReference) => r.controller === true);
  if (!ref) return '<none>';
  const slash = ref.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
  return `${(group ? `${ref.kind}.${group}` : ref.kind).toLowerCase()}/${ref.name}`;
}

export const controllerRevisionResource: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'controllerrevisions',
  kind: 'ControllerRevision',
  listKind: 'ControllerRevisionList',
  singular: 'controllerrevision',
  namespaced: true,
  shortNames: [],
  categories: [],
  subresources: [],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Controller', 'string', 'Controller of the object'),
      column('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
      column('Age', 'string', 'Time since the object was created.'),
    ],
    cells: (o, now) => [o.metadata?.name ?? '', controllerName(o), (o as ControllerRevision).revision ?? 0, age(o, now)],
  },
  hasGeneration: false,
  defaults: (o) => {
    const cr = o as ControllerRevision;
    if (cr.revision === undefined) cr.revision = 0;
  },
  validate: validateControllerRevision,
};
