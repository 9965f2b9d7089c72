// apps/v1 StatefulSet: defaults, validation and the table as upstream. The controller makes each
// pod's claims from volumeClaimTemplates (<template>-<set>-<ordinal>) before the pod.
import { field } from '../errors.js';
import { type LabelSelectorObject, validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { goLabelSelector, invalidRendered, nameIsDNSSubdomain, validateMeta, validateNonnegative } from '../validation.js';
import { arr, child, isObject, num, obj, optNum, semanticEqual, str } from './json.js';
import { defaultPodTemplate, type PodTemplateSpec } from './pod.js';
import { age, column, containerCells, containersColumn, imagesColumn, nameColumn } from './printing.js';
import { validatePodTemplateForReplicaSet, workloadSelector } from './replicaset.js';

export interface StatefulSetSpec {
  replicas?: number;
  selector?: LabelSelectorObject;
  template?: PodTemplateSpec;
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  updateStrategy?: { type?: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: { partition?: number; maxUnavailable?: number | string } };
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  ordinals?: { start?: number };
  volumeClaimTemplates?: unknown[];
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  availableReplicas: number;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
}

export interface StatefulSet extends KubeObject {
  metadata: ObjectMeta;
  spec?: StatefulSetSpec;
  status?: StatefulSetStatus;
}

function defaultStatefulSet(o: KubeObject): void {
  const spec = child(o, 'spec');
  if (typeof spec.replicas !== 'number') spec.replicas = 1;
  if (!spec.podManagementPolicy) spec.podManagementPolicy = 'OrderedReady';
  const strategy = child(spec, 'updateStrategy');
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    if (typeof ru.partition !== 'number') ru.partition = 0;
  }
  if (typeof spec.revisionHistoryLimit !== 'number') spec.revisionHistoryLimit = 10;
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  if (!retention.whenDeleted) retention.whenDeleted = 'Retain';
  if (!retention.whenScaled) retention.whenScaled = 'Retain';
  defaultPodTemplate(spec.template);
}

/**
 * The template with a volume for each claim template its containers may mount, as upstream gives
 * every pod (`persistentVolumeClaim: {claimName: <template>-<pod>}`): the pod's view of its storage.
 */
export function withClaimVolumes(template: unknown, claimTemplates: unknown, podName: string): unknown {
  const claims = arr(claimTemplates).map((c) => str(obj(obj(c).metadata).name)).filter((n) => n !== '');
  if (claims.length === 0 || !isObject(template)) return template;
  const spec = obj(template.spec);
  const volumes = arr(spec.volumes);
  const have = new Set(volumes.map((v) => str(obj(v).name)));
  const added = claims.filter((n) => !have.has(n)).map((n) => ({ name: n, persistentVolumeClaim: { claimName: `${n}-${podName}` } }));
  return { ...template, spec: { ...spec, volumes: [...volumes, ...added] } };
}

/** Spec fields an update may change; upstream forbids changing any other. */
const MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

function validateStatefulSet(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateNonnegative(num(spec.replicas), 'spec.replicas'));
  out.push(...validateNonnegative(num(spec.minReadySeconds), 'spec.minReadySeconds'));
  const policy = str(spec.podManagementPolicy);
  if (policy !== 'OrderedReady' && policy !== 'Parallel') out.push(field.notSupported('spec.podManagementPolicy', policy, ['OrderedReady', 'Parallel']));
  const strategy = obj(spec.updateStrategy);
  const type = str(strategy.type);
  if (type === 'RollingUpdate') {
    const partition = optNum(obj(strategy.rollingUpdate).partition);
    if (partition !== undefined) out.push(...validateNonnegative(partition, 'spec.updateStrategy.rollingUpdate.partition'));
  } else if (type === 'OnDelete') {
    if (isObject(strategy.rollingUpdate)) out.push(field.invalid('spec.updateStrategy.rollingUpdate', strategy.rollingUpdate, 'only allowed for updateStrategy \'RollingUpdate\''));
  } else {
    out.push(field.notSupported('spec.updateStrategy.type', type, ['OnDelete', 'RollingUpdate']));
  }
  const start = optNum(obj(spec.ordinals).start);
  if (start !== undefined) out.push(...validateNonnegative(start, 'spec.ordinals.start'));
  const rhl = optNum(spec.revisionHistoryLimit);
  if (rhl !== undefined) out.push(...validateNonnegative(rhl, 'spec.revisionHistoryLimit'));
  if (spec.selector === undefined || spec.selector === null) {
    out.push(field.required('spec.selector'));
  } else {
    out.push(...validateLabelSelectorObject(spec.selector, 'spec.selector'));
    const sel = obj(spec.selector);
    if (Object.keys(obj(sel.matchLabels)).length + arr(sel.matchExpressions).length === 0) {
      out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), 'empty selector is invalid for statefulset'));
    }
    const selector = workloadSelector(spec.selector);
    if (selector) out.push(...validatePodTemplateForReplicaSet(withClaimVolumes(spec.template, spec.volumeClaimTemplates, 'pod'), selector, 'spec.template', 'StatefulSet'));
  }
  if (old) {
    const before = obj(old.spec);
    const changed = Object.keys({ ...spec, ...before }).some((k) => !MUTABLE.includes(k) && !semanticEqual(spec[k], before[k]));
    if (changed) {
      out.push(
        field.forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    }
  }
  return out;
}

export const statefulSetResource: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'statefulsets',
  kind: 'StatefulSet',
  listKind: 'StatefulSetList',
  singular: 'statefulset',
  namespaced: true,
  shortNames: ['sts'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Ready', 'string', 'Number of the pod with ready state.'),
      column('Age', 'string', 'Time since the object was created.'),
      containersColumn,
      imagesColumn,
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const [names, images] = containerCells(obj(spec.template).spec);
      return [o.metadata?.name ?? '', `${num(status.readyReplicas)}/${optNum(spec.replicas) ?? 0}`, age(o, now), names, images];
    },
  },
  hasGeneration: true,
  defaults: defaultStatefulSet,
  validate: validateStatefulSet,
  prepareForCreate: (o) => {
    o.status = { replicas: 0, availableReplicas: 0 };
  },
};
