// batch/v1 Job: pods that run to completion. The server generates the selector (the Job's uid as
// a label its pods carry) unless spec.manualSelector is set, as upstream's job strategy does.
import { field } from '../errors.js';
import { validateLabelSelectorObject } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { goLabelSelector, invalidRendered, nameIsDNSSubdomain, validateImmutable, validateMeta, validateNonnegative } from '../validation.js';
import { child, isObject, num, obj, semanticEqual, str, strMap } from './json.js';
import { defaultPodTemplate, type PodTemplateSpec, validatePodTemplateSpec } from './pod.js';
import { age, column, containerCells, humanDuration, nameColumn, timestampMs, containersColumn, imagesColumn } from './printing.js';
import { formatLabelSelector, workloadSelector } from './replicaset.js';

export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
/** The pre-1.27 names, which upstream still sets next to the new ones. */
const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
const LEGACY_JOB_NAME_LABEL = 'job-name';
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';

export interface JobCondition {
  type: 'Complete' | 'Failed' | 'Suspended' | string;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface JobSpec {
  parallelism?: number;
  completions?: number | null;
  activeDeadlineSeconds?: number;
  backoffLimit?: number;
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  manualSelector?: boolean;
  template?: PodTemplateSpec;
  ttlSecondsAfterFinished?: number;
  completionMode?: 'NonIndexed' | 'Indexed';
  suspend?: boolean;
}

export interface JobStatus {
  conditions?: JobCondition[];
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  ready?: number;
  terminating?: number;
  completedIndexes?: string;
}

export interface Job extends KubeObject {
  metadata: ObjectMeta;
  spec?: JobSpec;
  status?: JobStatus;
}

/** The condition of `type` when it is True; tolerates malformed status (tables print anything stored). */
const NUMBER_FIELDS = ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished'];

export function jobCondition(job: Job, type: string): JobCondition | undefined {
  const conditions = obj(job.status).conditions;
  return Array.isArray(conditions) ? (conditions as JobCondition[]).find((c) => c?.type === type && c.status === 'True') : undefined;
}

function defaultJob(o: KubeObject): void {
  const spec = child(o, 'spec');
  // A null (a bare `activeDeadlineSeconds:` in YAML) means unset, as Go's pointers read it.
  for (const f of NUMBER_FIELDS) if (spec[f] === null) delete spec[f];
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (spec.parallelism === undefined) spec.parallelism = 1;
  if (spec.backoffLimit === undefined) spec.backoffLimit = 6;
  if (spec.completionMode === undefined) spec.completionMode = 'NonIndexed';
  if (spec.suspend === undefined) spec.suspend = false;
  defaultPodTemplate(spec.template);
}

/** Upstream generateSelector: the Job's uid as the selector, and its labels on the template. */
function prepareJobForCreate(o: KubeObject): void {
  const job = o as Job;
  job.status = {};
  if (!isObject(job.spec)) return;
  const spec = job.spec;
  if (spec.manualSelector === true) return;
  spec.template ??= {};
  // Anything but objects is left for validation to report.
  if (!isObject(spec.template)) return;
  const meta = (spec.template.metadata ??= {});
  if (!isObject(meta) || (meta.labels !== undefined && meta.labels !== null && !isObject(meta.labels))) return;
  const uid = job.metadata.uid!;
  meta.labels = { ...(meta.labels ?? {}), [CONTROLLER_UID_LABEL]: uid, [JOB_NAME_LABEL]: job.metadata.name!, [LEGACY_CONTROLLER_UID_LABEL]: uid, [LEGACY_JOB_NAME_LABEL]: job.metadata.name! };
  if (spec.selector === undefined || spec.selector === null) spec.selector = generatedSelector(job);
}

function generatedSelector(job: Job): NonNullable<JobSpec['selector']> {
  return { matchLabels: { [CONTROLLER_UID_LABEL]: job.metadata.uid! } };
}

function validateJob(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  for (const f of NUMBER_FIELDS) {
    const v = spec[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) out.push(field.typeInvalid(`spec.${f}`, v, 'must be a whole number'));
    else if (f === 'activeDeadlineSeconds' && v <= 0) out.push(field.invalid('spec.activeDeadlineSeconds', v, 'must be greater than 0'));
    else out.push(...validateNonnegative(v, `spec.${f}`));
  }
  // Upstream ValidateGeneratedSelector: without manualSelector the selector is the generated one.
  if (!old && spec.manualSelector !== true && isObject(spec.selector) && !semanticEqual(spec.selector, generatedSelector(o as Job))) {
    out.push(invalidRendered('spec.selector', goLabelSelector(spec.selector), '`selector` not auto-generated'));
  }
  const mode = str(spec.completionMode);
  if (mode && mode !== 'NonIndexed' && mode !== 'Indexed') out.push(field.notSupported('spec.completionMode', mode, ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed' && typeof spec.completions !== 'number') out.push(field.required('spec.completions', 'when completion mode is Indexed'));
  if (spec.selector === undefined || spec.selector === null) {
    out.push(field.required('spec.selector'));
  } else {
    out.push(...validateLabelSelectorObject(spec.selector, 'spec.selector'));
    const selector = workloadSelector(spec.selector);
    const labels = strMap(obj(obj(spec.template).metadata).labels);
    if (selector && !selector.isEmpty() && !selector.matches(labels)) {
      out.push(invalidRendered('spec.template.metadata.labels', JSON.stringify(labels), '`selector` does not match template `labels`'));
    }
  }
  out.push(...validatePodTemplateSpec(spec.template, 'spec.template'));
  const rp = str(obj(obj(spec.template).spec).restartPolicy);
  if (rp !== 'OnFailure' && rp !== 'Never') out.push(field.notSupported('spec.template.spec.restartPolicy', rp, ['OnFailure', 'Never']));
  if (old) {
    const prev = obj(old.spec);
    out.push(...validateImmutable(spec.selector, prev.selector, 'spec.selector', goLabelSelector));
    out.push(...validateImmutable(spec.completionMode, prev.completionMode, 'spec.completionMode'));
    out.push(...validateImmutable(spec.completions, prev.completions, 'spec.completions'));
    // The template may change only while the Job is suspended (upstream allows a few fields then).
    if (prev.suspend !== true) out.push(...validateImmutable(spec.template, prev.template, 'spec.template', () => 'core.PodTemplateSpec{...}'));
  }
  return out;
}

function statusText(job: Job): string {
  if (jobCondition(job, 'Complete')) return 'Complete';
  if (jobCondition(job, 'Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (jobCondition(job, 'Suspended')) return 'Suspended';
  return 'Running';
}

function completionsText(job: Job): string {
  const succeeded = num(obj(job.status).succeeded);
  const spec = obj(job.spec) as JobSpec;
  if (typeof spec.completions === 'number') return `${succeeded}/${spec.completions}`;
  if (typeof spec.parallelism === 'number' && spec.parallelism > 1) return `${succeeded}/1 of ${spec.parallelism}`;
  return `${succeeded}/1`;
}

function durationText(job: Job, now: number): string {
  const status = obj(job.status);
  const start = timestampMs(status.startTime);
  if (start === undefined) return '';
  const end = timestampMs(status.completionTime) ?? now;
  return humanDuration(end - start);
}

export const jobResource: ResourceType = {
  group: 'batch',
  version: 'v1',
  resource: 'jobs',
  kind: 'Job',
  listKind: 'JobList',
  singular: 'job',
  namespaced: true,
  shortNames: [],
  categories: ['all'],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Status', 'string', 'Status of the job.'),
      column('Completions', 'string', 'The number of pods which reached phase Succeeded.'),
      column('Duration', 'string', 'Time required to complete the job.'),
      column('Age', 'string', 'Time since the object was created.'),
      containersColumn,
      imagesColumn,
      column('Selector', 'string', 'A label query over pods that should match the pod count.', 1),
    ],
    cells(o, now) {
      const job = o as Job;
      const spec = obj(job.spec);
      const [names, images] = containerCells(obj(obj(spec.template).spec));
      return [o.metadata?.name ?? '', statusText(job), completionsText(job), durationText(job, now), age(o, now), names, images, formatLabelSelector(spec.selector)];
    },
  },
  hasGeneration: true,
  defaults: defaultJob,
  prepareForCreate: prepareJobForCreate,
  validate: validateJob,
};
