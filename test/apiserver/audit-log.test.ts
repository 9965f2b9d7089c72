import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLogBackend } from '../../src/apiserver/audit/log-backend.js';
import { eventLegacyLine, type AuditEvent } from '../../src/apiserver/audit/event.js';
import { microTime } from '../../src/util/time.js';
import { createLogger } from '../../src/util/log.js';

const log = createLogger('audit-log-test', 'json');

function event(i: number, pad = 0): AuditEvent {
  return {
    kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', auditID: `id-${i}`, stage: 'ResponseComplete',
    requestURI: `/api/v1/nodes/n${i}${'x'.repeat(pad)}`, verb: 'delete', user: { username: 'admin', groups: ['system:masters'] },
    sourceIPs: ['127.0.0.1'], objectRef: { resource: 'nodes', name: `n${i}`, apiVersion: 'v1' }, responseStatus: { metadata: {}, code: 200 },
    requestReceivedTimestamp: microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6) + 0.789), stageTimestamp: microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 7)),
  };
}

test('events are written one JSON object a line in upstream\'s field order, everything buffered written at close', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-log-'));
  try {
    const path = join(dir, 'audit.log');
    const backend = new AuditLogBackend({ path, log });
    await backend.open();
    for (let i = 0; i < 1000; i++) backend.write(event(i));
    await backend.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 1000);
    assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), ['kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'sourceIPs', 'objectRef', 'responseStatus', 'requestReceivedTimestamp', 'stageTimestamp']);
    assert.equal((JSON.parse(lines[999]!) as AuditEvent).auditID, 'id-999');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotation by size keeps at most maxbackup backups, named as lumberjack names them; maxage removes old ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-rotate-'));
  try {
    const path = join(dir, 'audit.log');
    // A backup from long ago: maxage removes it at the first rotation.
    writeFileSync(join(dir, 'audit-2020-01-01T00-00-00.000.log'), 'old\n');
    let now = Date.UTC(2026, 5, 1, 12, 0, 0);
    const backend = new AuditLogBackend({ path, log, maxSizeMB: 1, maxBackups: 2, maxAgeDays: 30, now: () => now });
    await backend.open();
    // About 100 KB an event batch; each turn of the loop is one batch, so 1 MB fills every ~10 turns.
    for (let turn = 0; turn < 45; turn++) {
      for (let i = 0; i < 10; i++) backend.write(event(turn * 10 + i, 10_000));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 5));
      now += 1000;
    }
    await backend.close();
    const files = readdirSync(dir).sort();
    const backups = files.filter((f) => f !== 'audit.log');
    assert.equal(backups.length, 2, files.join(' '));
    for (const b of backups) assert.match(b, /^audit-2026-06-01T12-\d\d-\d\d\.000\.log$/);
    assert.ok(files.includes('audit.log'));
    for (const f of files) assert.ok(readFileSync(join(dir, f)).length <= 1024 * 1024 + 20_000, `${f} is about 1 MB at most`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a batch bigger than the size limit is split across files: none grows past it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-batch-'));
  try {
    const path = join(dir, 'audit.log');
    const backend = new AuditLogBackend({ path, log, maxSizeMB: 1 });
    await backend.open();
    // About 3 MB in one turn of the loop, so one batch (as when a slow disk let events pile up).
    for (let i = 0; i < 300; i++) backend.write(event(i, 10_000));
    await backend.close();
    const files = readdirSync(dir);
    assert.equal(files.length, 3, files.join(' '));
    for (const f of files) assert.ok(readFileSync(join(dir, f)).length <= 1024 * 1024, `${f} is 1 MB at most`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('legacy format: upstream\'s one line of text', () => {
  const line = eventLegacyLine({ ...event(1), impersonatedUser: { username: 'jane', groups: ['dev'] }, userAgent: 'kubectl/v1.33' });
  assert.equal(
    line,
    '2026-01-02T03:04:05.006789Z AUDIT: id="id-1" stage="ResponseComplete" ip="127.0.0.1" method="delete" user="admin" groups="\\"system:masters\\"" as="jane" asgroups="\\"dev\\"" user-agent="kubectl/v1.33" namespace="<none>" uri="/api/v1/nodes/n1" response="200"',
  );
});

test('skiff up with several servers: each member writes its own audit log', async () => {
  const { memberAuditLog } = await import('../../src/cli/up.js');
  assert.deepEqual(memberAuditLog(['--audit-log-path', '/var/log/audit.log', '--audit-log-maxbackup', '3'], 'server-2'), ['--audit-log-path', '/var/log/audit-server-2.log', '--audit-log-maxbackup', '3']);
  assert.deepEqual(memberAuditLog(['--audit-log-path', '-'], 'server-2'), ['--audit-log-path', '-']);
});
