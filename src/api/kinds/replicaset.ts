// apps/v1 ReplicaSet, plus the pod-template rules it shares with Deployment.
import { field } from '../errors.js';
import { labelSelectorFromObject, type LabelSelector, type LabelSelectorObject, validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  childPath,
  goLabelSelector,
  goStringMap,
  invalidRendered,
  nameIsDNSSubdomain,
  validateImmutable,
  validateMeta,
  validateNonnegative,
} from '../validation.js';
import { child, isObject, num, obj, optNum, str, strMap } from './json.js';
import { defaultPodTemplate, type PodTemplateSpec, validatePodTemplateSpec } from './pod.js';
import { age, column, containerCells, nameColumn, containersColumn, imagesColumn } from './printing.js';

export interface ReplicaSetSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: LabelSelectorObject;
  template?: PodTemplateSpec;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
}

export interface ReplicaSet extends KubeObject {
  metadata: ObjectMeta;
  spec?: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

/** The parsed selector, or undefined when it is malformed (validation reports why). */
export function workloadSelector(sel: unknown): LabelSelector | undefined {
  try {
    return labelSelectorFromObject(sel);
  } catch {
    return undefined;
  }
}

/** Upstream ValidatePodTemplateSpecForReplicaSet: labels must match, pods must restart Always. */
export function validatePodTemplateForReplicaSet(template: unknown, selector: LabelSelector, path: string, owner: string): StatusCause[] {
  const out: StatusCause[] = [];
  const t = obj(template);
  const labels = obj(t.metadata).labels;
  if (!selector.isEmpty() && !selector.matches(strMap(labels))) {
    out.push(invalidRendered(childPath(path, 'metadata.labels'), isObject(labels) ? goStringMap(strMap(labels)) : goStringMap(null), '`selector` does not match template `labels`'));
  }
  out.push(...validatePodTemplateSpec(template, path));
  const spec = obj(t.spec);
  const rp = str(spec.restartPolicy);
  if (rp !== 'Always') out.push(field.notSupported(childPath(path, 'spec.restartPolicy'), rp, ['Always']));
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    out.push(field.forbidden(childPath(path, 'spec.activeDeadlineSeconds'), `activeDeadlineSeconds in ${owner} is not Supported`));
  }
  return out;
}

/** Upstream FormatLabelSelector: "<none>" for an empty string form, "<error>" when malformed. */
export function formatLabelSelector(sel: unknown): string {
  const s = workloadSelector(sel);
  if (!s) return '<error>';
  return s.toString() || '<none>';
}

/** The field selectors a set of replicas (ReplicaSet, ReplicationController) serves beyond the name. */
export const REPLICAS_FIELD_SELECTORS: ResourceType['fieldSelectors'] = {
  'status.replicas': (o) => String(num(obj(o.status).replicas)),
};

/** kubectl's columns for a set of replicas: desired, current, ready, age; wide: containers, images, selector. */
export function replicasTable(selectorText: (spec: Record<string, unknown>) => string): ResourceType['table'] {
  return {
    columns: [
      nameColumn,
      column('Desired', 'integer', 'Number of pods wanted.'),
      column('Current', 'integer', 'Number of pods that exist.'),
      column('Ready', 'integer', 'Number of pods that are ready.'),
      column('Age', 'string', 'Time since the object was created.'),
      containersColumn,
      imagesColumn,
      column('Selector', 'string', 'Label query over the pods the set owns.', 1),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const [names, images] = containerCells(obj(spec.template).spec);
      return [o.metadata?.name ?? '', optNum(spec.replicas) ?? 0, num(status.replicas), num(status.readyReplicas), age(o, now), names, images, selectorText(spec)];
    },
  };
}

function defaultReplicaSet(o: KubeObject): void {
  const spec = child(o, 'spec');
  if (typeof spec.replicas !== 'number') spec.replicas = 1;
  defaultPodTemplate(spec.template);
}

function validateReplicaSet(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateNonnegative(num(spec.replicas), 'spec.replicas'));
  out.push(...validateNonnegative(num(spec.minReadySeconds), 'spec.minReadySeconds'));
  if (spec.selector === undefined || spec.selector === null) {
    out.push(field.required('spec.selector'));
  } else {
    out.push(...validateLabelSelectorObject(spec.selector, 'spec.selector'));
    const sel = obj(spec.selector);
    if (Object.keys(obj(sel.matchLabels)).length + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0) === 0) {
      // Upstream's wording says "deployment" for ReplicaSets too.
      out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), 'empty selector is invalid for deployment'));
    }
  }
  const selector = workloadSelector(spec.selector);
  if (!selector) out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), 'invalid label selector'));
  else out.push(...validatePodTemplateForReplicaSet(spec.template, selector, 'spec.template', 'ReplicaSet'));
  if (old) out.push(...validateImmutable(spec.selector, obj(old.spec).selector, 'spec.selector', goLabelSelector));
  return out;
}

export const replicaSetResource: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  kind: 'ReplicaSet',
  listKind: 'ReplicaSetList',
  singular: 'replicaset',
  namespaced: true,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  fieldSelectors: REPLICAS_FIELD_SELECTORS,
  table: replicasTable((spec) => formatLabelSelector(spec.selector)),
  hasGeneration: true,
  defaults: defaultReplicaSet,
  validate: validateReplicaSet,
  prepareForCreate: (o) => {
    o.status = { replicas: 0 };
  },
};
