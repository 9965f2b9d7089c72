// Per-line times of logs a container writes itself (the process runtime): marks of how far the
// file had grown by when, and what `kubectl logs --since/--timestamps` makes of them.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogGrowthRecorder, LogMarksReader, TimedLogDecoder, readLogMarks, timeAt, timesPathOf } from '../../src/agent/log-times.js';
import { FakeClock, systemClock } from '../../src/util/clock.js';
import { eventually } from '../support/eventually.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-log-times-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a line takes the time of the first mark at or past its end; past the last mark, now', () => {
  const marks = { bytes: [6, 12, 18], times: [1000, 2000, 3000] };
  assert.equal(timeAt(marks, 6, 9), 1000);
  assert.equal(timeAt(marks, 7, 9), 2000);
  assert.equal(timeAt(marks, 18, 9), 3000);
  assert.equal(timeAt(marks, 19, 9), 9);
});

test('marks after a rotation start again; a repeated mark is ignored', () => {
  const log = join(dir, 'rotated.log');
  writeFileSync(timesPathOf(log), '10 1000\n20 2000\n20 2500\n5 3000\n9 4000\n');
  assert.deepEqual(readLogMarks(log), { bytes: [5, 9], times: [3000, 4000] });
});

test('--since drops the lines before it and --timestamps prefixes each with its time, whatever the chunks', () => {
  const log = join(dir, 'decode.log');
  writeFileSync(log, 'one\ntwo\nthree\nfour');
  writeFileSync(timesPathOf(log), '4 1000\n8 2000\n14 3000\n');
  const d = new TimedLogDecoder(log, { offset: 0, timestamps: true, sinceMs: 2000, now: () => 5000 });
  const data = readFileSync(log);
  const out = Buffer.concat([d.push(data.subarray(0, 5)), d.push(data.subarray(5, 11)), d.push(data.subarray(11)), d.end()]).toString();
  assert.equal(out, '1970-01-01T00:00:02.000000000Z two\n1970-01-01T00:00:03.000000000Z three\n1970-01-01T00:00:05.000000000Z four');
  // From an offset (--tail): positions count from where the read began.
  const tail = new TimedLogDecoder(log, { offset: 8, sinceMs: 2500, now: () => 5000 });
  assert.equal(tail.push(data.subarray(8)).toString() + tail.end().toString(), 'three\nfour');
});

test('a followed log reads only the marks added since it last looked, and begins again with a rotated log', () => {
  const log = join(dir, 'followed.log');
  writeFileSync(timesPathOf(log), '4 1000\n');
  const reader = new LogMarksReader(log);
  assert.deepEqual(reader.marks, { bytes: [4], times: [1000] });
  // What was read is not read again (a mark rewritten in place keeps the time first read), and a
  // mark still being written waits until it is whole.
  writeFileSync(timesPathOf(log), '4 1500\n8 2000\n12 30');
  assert.deepEqual(reader.refresh(), { bytes: [4, 8], times: [1000, 2000] });
  appendFileSync(timesPathOf(log), '00\n');
  assert.deepEqual(reader.refresh(), { bytes: [4, 8, 12], times: [1000, 2000, 3000] });
  // A rotated log's marks file is written anew, shorter: read from its start again.
  writeFileSync(timesPathOf(log), '4 7000\n');
  assert.deepEqual(reader.refresh(), { bytes: [4], times: [7000] });
  // The decoder of a followed log looks again when a line is past the marks it has.
  writeFileSync(log, 'one\ntwo\n');
  const d = new TimedLogDecoder(log, { offset: 0, timestamps: true, now: () => 9000 });
  assert.equal(d.push(Buffer.from('one\n')).toString(), '1970-01-01T00:00:07.000000000Z one\n');
  appendFileSync(timesPathOf(log), '8 8000\n');
  assert.equal(d.push(Buffer.from('two\n')).toString(), '1970-01-01T00:00:08.000000000Z two\n');
});

test('the recorder marks a log as it grows, and starts again when it is emptied by rotation', async () => {
  const log = join(dir, 'grow.log');
  writeFileSync(log, '');
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const r = new LogGrowthRecorder(log, clock);
  try {
    appendFileSync(log, 'a\n');
    await eventually(() => readLogMarks(log).bytes.includes(2), 5000, 'a mark at 2 bytes');
    await clock.advance(1000);
    appendFileSync(log, 'bb\n');
    const m = await eventually(() => {
      const x = readLogMarks(log);
      return x.bytes.includes(5) ? x : undefined;
    }, 5000, 'a mark at 5 bytes');
    assert.deepEqual(m.times, [Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1) + 1000]);
    truncateSync(log, 0);
    await clock.advance(1000);
    appendFileSync(log, 'c\n');
    await eventually(() => {
      const x = readLogMarks(log);
      return !x.bytes.includes(5) && x.bytes.at(-1) === 2;
    }, 5000, 'marks begun again');
  } finally {
    r.stop();
  }
});

test('a chatty container costs at most ten marks a second, and its last line is marked', async () => {
  const log = join(dir, 'chatty.log');
  writeFileSync(log, '');
  const r = new LogGrowthRecorder(log, systemClock);
  try {
    // A line every 10 ms or so for a second: a hundred writes.
    const began = Date.now();
    for (let i = 0; i < 100; i++) {
      appendFileSync(log, `line ${i}\n`);
      await new Promise((res) => setTimeout(res, 10));
    }
    const seconds = (Date.now() - began) / 1000;
    const size = readFileSync(log).length;
    const m = await eventually(() => {
      const x = readLogMarks(log);
      return x.bytes.at(-1) === size ? x : undefined;
    }, 5000, 'a mark at the end of the log');
    // Ten a second, the first at once and one for the last writes; the 2 s look (for what inotify
    // missed) may add one a time it comes.
    const most = 2 + Math.ceil(seconds * 10) + Math.ceil(seconds / 2);
    assert.ok(m.bytes.length <= most, `${m.bytes.length} marks for ${seconds} s of writing (at most ${most})`);
  } finally {
    r.stop();
  }
});
