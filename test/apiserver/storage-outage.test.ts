import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { StorageOutageLog } from '../../src/apiserver/storage-outage.js';

function recording() {
  const lines: { msg: string; failedRequests?: number }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string });
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('storage outage log', () => {
  it('says once that storage fails, however each failure words its particulars, and once that it works again', async () => {
    const { log, lines } = recording();
    const o = new StorageOutageLog(log);
    o.writeSucceeded();
    o.failure('etcd: create failed after 5012 ms: http://127.0.0.1:2379: no leader', 'POST', '/a');
    o.failure('etcd: update failed after 4873 ms: http://127.0.0.2:2379: no leader', 'PUT', '/b');
    o.failure('etcd: get failed after 5001 ms: http://127.0.0.3:2379: no leader', 'GET', '/c');
    o.failure('write failed: database or disk is full', 'POST', '/d');
    o.writeSucceeded();
    o.writeSucceeded();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(lines.map((l) => l.msg), ['requests failing: storage unavailable', 'requests failing: storage unavailable', 'storage available again']);
    assert.equal(lines[2]!.failedRequests, 4);
  });
});
