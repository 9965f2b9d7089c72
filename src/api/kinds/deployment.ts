// apps/v1 Deployment.
import { field } from '../errors.js';
import { type LabelSelectorObject, validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  goIntOrString,
  goLabelSelector,
  intOrPercentValue,
  invalidRendered,
  isNotMoreThan100Percent,
  nameIsDNSSubdomain,
  validateImmutable,
  validateMeta,
  validateNonnegative,
  validatePositiveIntOrPercent,
} from '../validation.js';
import { arr, child, isObject, num, obj, optNum, str } from './json.js';
import { defaultPodTemplate, type PodTemplateSpec } from './pod.js';
import { age, column, containerCells, nameColumn, containersColumn, imagesColumn } from './printing.js';
import { validatePodTemplateForReplicaSet, workloadSelector } from './replicaset.js';

export interface DeploymentStrategy {
  type?: 'RollingUpdate' | 'Recreate';
  rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string };
}

export interface DeploymentSpec {
  replicas?: number;
  selector?: LabelSelectorObject;
  template?: PodTemplateSpec;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
}

export interface DeploymentCondition {
  type: 'Available' | 'Progressing' | 'ReplicaFailure' | string;
  status: 'True' | 'False' | 'Unknown';
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

export interface Deployment extends KubeObject {
  metadata: ObjectMeta;
  spec?: DeploymentSpec;
  status?: DeploymentStatus;
}

function defaultDeployment(o: KubeObject): void {
  const spec = child(o, 'spec');
  if (typeof spec.replicas !== 'number') spec.replicas = 1;
  const strategy = child(spec, 'strategy');
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    if (ru.maxUnavailable === undefined || ru.maxUnavailable === null) ru.maxUnavailable = '25%';
    if (ru.maxSurge === undefined || ru.maxSurge === null) ru.maxSurge = '25%';
  }
  if (typeof spec.revisionHistoryLimit !== 'number') spec.revisionHistoryLimit = 10;
  if (typeof spec.progressDeadlineSeconds !== 'number') spec.progressDeadlineSeconds = 600;
  defaultPodTemplate(spec.template);
}

function validateStrategy(strategy: unknown): StatusCause[] {
  const s = obj(strategy);
  const type = str(s.type);
  const out: StatusCause[] = [];
  if (type === 'Recreate') {
    if (s.rollingUpdate !== undefined && s.rollingUpdate !== null) {
      out.push(field.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (type === 'RollingUpdate') {
    if (!isObject(s.rollingUpdate)) {
      out.push(field.required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'));
    } else {
      const ru = s.rollingUpdate;
      out.push(...validatePositiveIntOrPercent(ru.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
      out.push(...validatePositiveIntOrPercent(ru.maxSurge, 'spec.strategy.rollingUpdate.maxSurge'));
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        out.push(invalidRendered('spec.strategy.rollingUpdate.maxUnavailable', goIntOrString(ru.maxUnavailable), 'may not be 0 when `maxSurge` is 0'));
      }
      out.push(...isNotMoreThan100Percent(ru.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
    }
  } else {
    out.push(field.notSupported('spec.strategy', type, ['Recreate', 'RollingUpdate']));
  }
  return out;
}

function validateDeployment(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateNonnegative(num(spec.replicas), 'spec.replicas'));
  if (spec.selector === undefined || spec.selector === null) {
    out.push(field.required('spec.selector'));
    return out;
  }
  out.push(...validateLabelSelectorObject(spec.selector, 'spec.selector'));
  const sel = obj(spec.selector);
  if (Object.keys(obj(sel.matchLabels)).length + arr(sel.matchExpressions).length === 0) {
    out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), 'empty selector is invalid for deployment'));
  }
  const selector = workloadSelector(spec.selector);
  if (!selector) out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), 'invalid label selector'));
  else out.push(...validatePodTemplateForReplicaSet(spec.template, selector, 'spec.template', 'ReplicaSet'));
  out.push(...validateStrategy(spec.strategy));
  out.push(...validateNonnegative(num(spec.minReadySeconds), 'spec.minReadySeconds'));
  const rhl = optNum(spec.revisionHistoryLimit);
  if (rhl !== undefined) out.push(...validateNonnegative(rhl, 'spec.revisionHistoryLimit'));
  const pds = optNum(spec.progressDeadlineSeconds);
  if (pds !== undefined) {
    out.push(...validateNonnegative(pds, 'spec.progressDeadlineSeconds'));
    if (pds <= num(spec.minReadySeconds)) out.push(field.invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
  // apps/v1 forbids retargeting a deployment at other pods.
  if (old) out.push(...validateImmutable(spec.selector, obj(old.spec).selector, 'spec.selector', goLabelSelector));
  return out;
}

/** The Selector cell: the selector's string form ("" when absent), "<invalid>" when malformed. */
function selectorText(sel: unknown): string {
  const s = workloadSelector(sel);
  return s ? s.toString() : '<invalid>';
}

export const deploymentResource: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  kind: 'Deployment',
  listKind: 'DeploymentList',
  singular: 'deployment',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Ready', 'string', 'Ready pods out of desired pods.'),
      column('Up-to-date', 'string', 'Number of pods running the latest template.'),
      column('Available', 'string', 'Number of pods available to users.'),
      column('Age', 'string', 'Time since the object was created.'),
      containersColumn,
      imagesColumn,
      column('Selector', 'string', 'Label query over the pods the deployment owns.', 1),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const [names, images] = containerCells(obj(spec.template).spec);
      return [
        o.metadata?.name ?? '',
        `${num(status.readyReplicas)}/${optNum(spec.replicas) ?? 0}`,
        num(status.updatedReplicas),
        num(status.availableReplicas),
        age(o, now),
        names,
        images,
        selectorText(spec.selector),
      ];
    },
  },
  hasGeneration: true,
  defaults: defaultDeployment,
  validate: validateDeployment,
  prepareForCreate: (o) => {
    o.status = {};
  },
};
