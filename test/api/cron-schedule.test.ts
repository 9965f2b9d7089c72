import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleError } from '../../src/api/kinds/cron-schedule.js';

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
  });
});
