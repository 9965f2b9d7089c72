// apps/v1 DaemonSet.
import { field } from '../errors.js';
import { type LabelSelectorObject, validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  goIntOrString,
  goLabelSelector,
  goStringMap,
  intOrPercentValue,
  invalidRendered,
  isNotMoreThan100Percent,
  nameIsDNSSubdomain,
  validateImmutable,
  validateMeta,
  validateNonnegative,
  validatePositiveIntOrPercent,
} from '../validation.js';
import { arr, child, isObject, num, obj, optNum, semanticEqual, str, strMap } from './json.js';
import { defaultPodTemplate, type PodTemplateSpec, validatePodTemplateSpec } from './pod.js';
import { age, column, containerCells, formatLabels, nameColumn, containersColumn, imagesColumn } from './printing.js';
import { formatLabelSelector, workloadSelector } from './replicaset.js';

/** Where apps/v1 keeps the internal template generation (upstream's conversion does the same). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

export interface DaemonSetSpec {
  selector?: LabelSelectorObject;
  template?: PodTemplateSpec;
  updateStrategy?: { type?: 'RollingUpdate' | 'OnDelete'; rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string } };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
}

export interface DaemonSetStatus {
  currentNumberScheduled: number;
  numberMisscheduled: number;
  desiredNumberScheduled: number;
  numberReady: number;
  observedGeneration?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  collisionCount?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
}

export interface DaemonSet extends KubeObject {
  metadata: ObjectMeta;
  spec?: DaemonSetSpec;
  status?: DaemonSetStatus;
}

function defaultDaemonSet(o: KubeObject): void {
  const spec = child(o, 'spec');
  const strategy = child(spec, 'updateStrategy');
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    if (ru.maxUnavailable === undefined || ru.maxUnavailable === null) ru.maxUnavailable = 1;
    if (ru.maxSurge === undefined || ru.maxSurge === null) ru.maxSurge = 0;
  }
  if (typeof spec.revisionHistoryLimit !== 'number') spec.revisionHistoryLimit = 10;
  defaultPodTemplate(spec.template);
}

function templateGeneration(o: KubeObject): number {
  const v = Number(o.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isInteger(v) && v > 0 ? v : 0;
}

function setTemplateGeneration(o: KubeObject, gen: number): void {
  const annotations = { ...(o.metadata.annotations ?? {}) };
  if (gen > 0) annotations[TEMPLATE_GENERATION_ANNOTATION] = String(gen);
  else delete annotations[TEMPLATE_GENERATION_ANNOTATION];
  if (Object.keys(annotations).length > 0) o.metadata.annotations = annotations;
  else delete o.metadata.annotations;
}

function prepareForCreate(o: KubeObject): void {
  o.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
  setTemplateGeneration(o, Math.max(1, templateGeneration(o)));
}

// The template generation is server-owned: it follows the old value, plus one when the template changed.
function prepareForUpdate(o: KubeObject, old: KubeObject): void {
  const oldGen = templateGeneration(old);
  const changed = !semanticEqual(obj(o.spec).template, obj(old.spec).template);
  setTemplateGeneration(o, changed ? oldGen + 1 : oldGen);
}

function validateUpdateStrategy(strategy: unknown): StatusCause[] {
  const s = obj(strategy);
  const type = str(s.type);
  const path = 'spec.updateStrategy';
  if (type === 'OnDelete') return [];
  if (type !== 'RollingUpdate') return [field.notSupported(path, type, ['RollingUpdate', 'OnDelete'])];
  if (!isObject(s.rollingUpdate)) return [field.required(`${path}.rollingUpdate`)];
  const ru = s.rollingUpdate;
  const out: StatusCause[] = [];
  out.push(...validatePositiveIntOrPercent(ru.maxUnavailable, `${path}.rollingUpdate.maxUnavailable`));
  out.push(...validatePositiveIntOrPercent(ru.maxSurge, `${path}.rollingUpdate.maxSurge`));
  out.push(...isNotMoreThan100Percent(ru.maxUnavailable, `${path}.rollingUpdate.maxUnavailable`));
  out.push(...isNotMoreThan100Percent(ru.maxSurge, `${path}.rollingUpdate.maxSurge`));
  const hasUnavailable = (intOrPercentValue(ru.maxUnavailable) ?? 0) !== 0;
  const hasSurge = (intOrPercentValue(ru.maxSurge) ?? 0) !== 0;
  if (hasUnavailable && hasSurge) {
    out.push(invalidRendered(`${path}.rollingUpdate.maxSurge`, goIntOrString(ru.maxSurge), 'may not be set when maxUnavailable is non-zero'));
  } else if (!hasUnavailable && !hasSurge) {
    out.push(field.required(`${path}.rollingUpdate.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  }
  return out;
}

function validateDaemonSet(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateLabelSelectorObject(spec.selector, 'spec.selector'));
  const template = obj(spec.template);
  const labels = obj(template.metadata).labels;
  const selector = workloadSelector(spec.selector);
  // An absent selector selects nothing, so it can never match the template: upstream reports it that way.
  if (selector && !selector.matches(strMap(labels))) {
    out.push(invalidRendered('spec.template.metadata.labels', isObject(labels) ? goStringMap(strMap(labels)) : goStringMap(null), '`selector` does not match template `labels`'));
  }
  if (isObject(spec.selector) && Object.keys(obj(spec.selector.matchLabels)).length + arr(spec.selector.matchExpressions).length === 0) {
    out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), 'empty selector is invalid for daemonset'));
  }
  out.push(...validatePodTemplateSpec(spec.template, 'spec.template'));
  const podSpec = obj(template.spec);
  const rp = str(podSpec.restartPolicy);
  if (rp !== 'Always') out.push(field.notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  const ads = optNum(podSpec.activeDeadlineSeconds);
  if (ads !== undefined) out.push(field.invalid('spec.template.spec.activeDeadlineSeconds', ads, 'activeDeadlineSeconds in DaemonSet is not Supported'));
  out.push(...validateNonnegative(num(spec.minReadySeconds), 'spec.minReadySeconds'));
  out.push(...validateUpdateStrategy(spec.updateStrategy));
  const rhl = optNum(spec.revisionHistoryLimit);
  if (rhl !== undefined) out.push(...validateNonnegative(rhl, 'spec.revisionHistoryLimit'));
  if (old) out.push(...validateImmutable(spec.selector, obj(old.spec).selector, 'spec.selector', goLabelSelector));
  return out;
}

export const daemonSetResource: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'daemonsets',
  kind: 'DaemonSet',
  listKind: 'DaemonSetList',
  singular: 'daemonset',
  namespaced: true,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Desired', 'integer', 'Number of nodes that should run the daemon pod.'),
      column('Current', 'integer', 'Number of nodes running at least one daemon pod.'),
      column('Ready', 'integer', 'Number of nodes whose daemon pod is ready.'),
      column('Up-to-date', 'integer', 'Number of nodes running the latest template.'),
      column('Available', 'integer', 'Number of nodes whose daemon pod is available.'),
      column('Node Selector', 'string', 'Node labels the daemon pods are restricted to.'),
      column('Age', 'string', 'Time since the object was created.'),
      containersColumn,
      imagesColumn,
      column('Selector', 'string', 'Label query over the pods the daemon set owns.', 1),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const podSpec = obj(obj(spec.template).spec);
      const [names, images] = containerCells(podSpec);
      return [
        o.metadata?.name ?? '',
        num(status.desiredNumberScheduled),
        num(status.currentNumberScheduled),
        num(status.numberReady),
        num(status.updatedNumberScheduled),
        num(status.numberAvailable),
        formatLabels(podSpec.nodeSelector),
        age(o, now),
        names,
        images,
        formatLabelSelector(spec.selector),
      ];
    },
  },
  hasGeneration: true,
  defaults: defaultDaemonSet,
  validate: validateDaemonSet,
  prepareForCreate,
  prepareForUpdate,
};
