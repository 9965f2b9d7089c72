// The agent's log endpoint: `kubectl logs -f` keeps following a container's log across a
// rotation (the file copied aside and emptied while the container writes on).
import { after, before, describe, it } from 'node:test';
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogServer } from '../../src/agent/log-server.js';
import type { PodWorker } from '../../src/agent/pod-worker.js';
import { ensureClusterPki, type ClusterPki } from '../../src/pki/cluster-pki.js';
import { silentLogger } from '../../src/util/log.js';
import { eventually } from '../support/eventually.js';

describe('log server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-logserver-'));
  const log = join(dir, '0.log');
  let pki: ClusterPki;
  let server: LogServer;
  let port: number;
  before(async () => {
    pki = await ensureClusterPki(dir, ['127.0.0.1']);
    const worker = { logs: () => ({ known: true, current: { path: log, running: true } }) } as unknown as PodWorker;
    server = new LogServer({ host: '127.0.0.1', port: 0, certPem: pki.server.certPem, keyPem: pki.server.keyPem, caPem: pki.ca.certPem, log: silentLogger(), lookup: () => worker, pollMs: 20 });
    port = await server.start();
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows a log across its rotation: what the container writes into the emptied file arrives', async () => {
    writeFileSync(log, `${'before rotation '.repeat(20)}\n`);
    let received = '';
    const req = https.get({ host: '127.0.0.1', port, path: '/containerLogs/default/p/c?follow=true', ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d: string) => (received += d));
    });
    req.on('error', () => {});
    try {
      await eventually(() => received.includes('before rotation'), 5_000, 'the log so far');
      // Rotated: copied aside (not needed here) and emptied; the container goes on, shorter than before.
      truncateSync(log, 0);
      appendFileSync(log, 'after rotation\n');
      await eventually(() => received.includes('after rotation'), 5_000, `what was written after the rotation (got ${JSON.stringify(received.slice(-40))})`);
    } finally {
      req.destroy();
    }
  });
});
