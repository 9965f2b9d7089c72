// batch/v1 CronJob: Jobs from a template on a cron schedule (cron-parser reads the schedule, in
// spec.timeZone or UTC).
import { CronExpressionParser } from 'cron-parser';
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { childPath, nameIsDNSSubdomain, validateMeta, validateNonnegative } from '../validation.js';
import { child, isObject, obj, str } from './json.js';
import type { JobSpec } from './job.js';
import { defaultPodTemplate, validatePodTemplateSpec } from './pod.js';
import { age, column, containerCells, containersColumn, imagesColumn, nameColumn, since } from './printing.js';
import { formatLabelSelector } from './replicaset.js';
import { everyIntervalMs, scheduleError } from './cron-schedule.js';

export interface CronJobSpec {
  schedule?: string;
  timeZone?: string;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
  suspend?: boolean;
  jobTemplate?: { metadata?: ObjectMeta; spec?: JobSpec };
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
}

export interface CronJob extends KubeObject {
  metadata: ObjectMeta;
  spec?: CronJobSpec;
  status?: { active?: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string }[]; lastScheduleTime?: string; lastSuccessfulTime?: string };
}

/** Upstream: Job names get an 11-character suffix, so CronJob names stop at 52. */
const MAX_NAME = 52;
const POLICIES = ['Allow', 'Forbid', 'Replace'];
const COUNT_FIELDS = ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'];

/** When a schedule fires around `now`; both absent: a valid schedule that never fires. */
export interface ScheduleTimes {
  /** The last time at or before now (an @every schedule's: only those after `since`). */
  latest?: number;
  /** The first time after now. */
  next?: number;
}

/**
 * The schedule's times, read in the CronJob's time zone. `since` (the last scheduled time, else the
 * creation time) anchors `@every`, as robfig/cron's ConstantDelaySchedule counts from it. Throws for
 * a schedule upstream would refuse.
 */
export function scheduleTimes(schedule: string, timeZone: string | undefined, since: number, now: number): ScheduleTimes {
  const every = everyIntervalMs(schedule);
  if (every !== undefined) {
    const from = since - (since % 1000);
    if (now < from + every) return { next: from + every };
    const latest = from + Math.floor((now - from) / every) * every;
    return { latest, next: latest + every };
  }
  const tz = timeZone || 'UTC';
  try {
    return {
      latest: CronExpressionParser.parse(schedule, { currentDate: new Date(now + 1), tz }).prev().getTime(),
      next: CronExpressionParser.parse(schedule, { currentDate: new Date(now), tz }).next().getTime(),
    };
  } catch (e) {
    // robfig/cron checks each field's range alone, so `31 2` (a day no month has) is valid; cron-parser
    // refuses it. It never fires.
    if (scheduleError(schedule) === undefined) return {};
    throw e;
  }
}

function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz !== 'Local';
  } catch {
    return false;
  }
}

function defaultCronJob(o: KubeObject): void {
  const spec = child(o, 'spec');
  for (const f of COUNT_FIELDS) if (spec[f] === null) delete spec[f];
  if (spec.concurrencyPolicy === undefined) spec.concurrencyPolicy = 'Allow';
  if (spec.suspend === undefined) spec.suspend = false;
  if (spec.successfulJobsHistoryLimit === undefined) spec.successfulJobsHistoryLimit = 3;
  if (spec.failedJobsHistoryLimit === undefined) spec.failedJobsHistoryLimit = 1;
  const tmpl = spec.jobTemplate;
  if (isObject(tmpl) && isObject(tmpl.spec)) defaultPodTemplate(tmpl.spec.template);
}

function validateCronJob(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const name = o.metadata?.name ?? '';
  if (name.length > MAX_NAME) out.push(field.invalid('metadata.name', name, `must be no more than ${MAX_NAME} characters`));
  const spec = obj(o.spec);
  const schedule = str(spec.schedule);
  const timeZone = typeof spec.timeZone === 'string' ? spec.timeZone : undefined;
  // Only robfig/cron's per-field range checks, as upstream: `59 23 31 2 *` is valid (it never fires).
  const problem = schedule ? scheduleError(schedule) : undefined;
  if (!schedule) out.push(field.required('spec.schedule'));
  else if (/^\s*(CRON_)?TZ=/.test(schedule)) out.push(field.invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  else if (problem) out.push(field.invalid('spec.schedule', schedule, problem));
  if (timeZone !== undefined && !validTimeZone(timeZone)) out.push(field.invalid('spec.timeZone', timeZone, 'unknown time zone'));
  const policy = str(spec.concurrencyPolicy);
  if (!POLICIES.includes(policy)) out.push(field.notSupported('spec.concurrencyPolicy', policy, POLICIES));
  for (const f of COUNT_FIELDS) {
    const v = spec[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) out.push(field.typeInvalid(`spec.${f}`, v, 'must be a whole number'));
    else out.push(...validateNonnegative(v, `spec.${f}`));
  }
  const template = obj(obj(obj(spec.jobTemplate).spec).template);
  const path = 'spec.jobTemplate.spec.template';
  out.push(...validatePodTemplateSpec(template, path));
  const rp = str(obj(template.spec).restartPolicy);
  if (rp !== 'OnFailure' && rp !== 'Never') out.push(field.notSupported(childPath(path, 'spec.restartPolicy'), rp, ['OnFailure', 'Never']));
  return out;
}

export const cronJobResource: ResourceType = {
  group: 'batch',
  version: 'v1',
  resource: 'cronjobs',
  kind: 'CronJob',
  listKind: 'CronJobList',
  singular: 'cronjob',
  namespaced: true,
  shortNames: ['cj'],
  categories: ['all'],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Schedule', 'string', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
      column('Timezone', 'string', 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
      column('Suspend', 'boolean', 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.'),
      column('Active', 'integer', 'A list of pointers to currently running jobs.'),
      column('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.'),
      column('Age', 'string', 'Time since the object was created.'),
      containersColumn,
      imagesColumn,
      column('Selector', 'string', 'A label query over pods that should match the pod count.', 1),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const status = obj(o.status);
      const jobSpec = obj(obj(spec.jobTemplate).spec);
      const [names, images] = containerCells(obj(obj(jobSpec.template).spec));
      const last = typeof status.lastScheduleTime === 'string' ? since(status.lastScheduleTime, now) : '<none>';
      return [
        o.metadata?.name ?? '',
        str(spec.schedule),
        typeof spec.timeZone === 'string' && spec.timeZone ? spec.timeZone : '<none>',
        spec.suspend === true ? 'True' : 'False',
        Array.isArray(status.active) ? status.active.length : 0,
        last,
        age(o, now),
        names,
        images,
        formatLabelSelector(jobSpec.selector),
      ];
    },
  },
  hasGeneration: true,
  defaults: defaultCronJob,
  prepareForCreate: (o) => {
    o.status = {};
  },
  validate: validateCronJob,
};
