import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleError } from '../../src/api/kinds/cron-schedule.js';
import { cronJobResource, scheduleTimes } from '../../src/api/kinds/cronjob.js';

describe('CronJob schedules', () => {
  it('accept what robfig/cron accepts: ranges, steps, lists, names, descriptors', () => {
    for (const s of ['*/5 * * * *', '0 0 * * MON-FRI', '0 0 * JAN,dec 0', '15,45 9-17/2 1-31 * *', '@hourly', '@every 5m', '0 0 ? * *']) assert.equal(scheduleError(s), undefined, s);
  });

  it('word their errors as the API server does', () => {
    assert.equal(scheduleError('61 * * * *'), 'end of range (61) above maximum (59): 61');
    assert.equal(scheduleError('0 0 0 * *'), 'beginning of range (0) below minimum (1): 0');
    assert.equal(scheduleError('5-2 * * * *'), 'beginning of range (5) beyond end of range (2): 5-2');
    assert.equal(scheduleError('* * * *'), 'expected exactly 5 fields, found 4: [* * * *]');
    assert.equal(scheduleError('*/0 * * * *'), 'step of range should be a positive number: */0');
    assert.equal(scheduleError('@often'), 'unrecognized descriptor: @often');
    assert.equal(scheduleError('@every 1d'), 'failed to parse duration @every 1d: time: unknown unit "d" in duration "1d"');
    assert.equal(scheduleError('@every 5'), 'failed to parse duration @every 5: time: missing unit in duration "5"');
    assert.equal(scheduleError('@every soon'), 'failed to parse duration @every soon: time: invalid duration "soon"');
    assert.equal(scheduleError('@every 1h30m'), undefined);
    assert.equal(scheduleError('@every 1.5s'), undefined);
  });

  it('are only range-checked per field, as robfig/cron does: a day no month has is valid (it never fires)', () => {
    for (const s of ['59 23 31 2 *', '0 0 30 2 *', '0 0 31 4,6,9,11 *', '*/90 * * * *']) {
      assert.equal(scheduleError(s), undefined, s);
      const o = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c', namespace: 'default' }, spec: { schedule: s, jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
      cronJobResource.defaults(o);
      assert.deepEqual(cronJobResource.validate(o, undefined), [], s);
    }
  });

  it('fire when robfig/cron would: @every from the anchor in whole seconds, a day no month has never', () => {
    const since = Date.parse('2024-05-01T10:00:00.700Z');
    const t = (iso: string): number => Date.parse(iso);
    assert.deepEqual(scheduleTimes('@every 30m', undefined, since, t('2024-05-01T10:20:00Z')), { next: t('2024-05-01T10:30:00Z') });
    assert.deepEqual(scheduleTimes('@every 30m', undefined, since, t('2024-05-01T11:35:00Z')), { latest: t('2024-05-01T11:30:00Z'), next: t('2024-05-01T12:00:00Z') });
    // Every: shorter than a second is a second, and fractions of one are dropped.
    assert.deepEqual(scheduleTimes('@every 1.5s', undefined, since, since + 1_000), { latest: t('2024-05-01T10:00:01Z'), next: t('2024-05-01T10:00:02Z') });
    assert.deepEqual(scheduleTimes('@every 10ms', undefined, since, since + 300), { latest: t('2024-05-01T10:00:01Z'), next: t('2024-05-01T10:00:02Z') });
    assert.deepEqual(scheduleTimes('*/15 * * * *', undefined, since, t('2024-05-01T10:20:00Z')), { latest: t('2024-05-01T10:15:00Z'), next: t('2024-05-01T10:30:00Z') });
    assert.deepEqual(scheduleTimes('59 23 31 2 *', undefined, since, t('2024-05-01T10:20:00Z')), {});
    assert.throws(() => scheduleTimes('61 * * * *', undefined, since, since));
  });
});
