// `skiff server --service-cluster-ip-range` and `--controllers` as users set them: Services get
// addresses from the range (the kubernetes Service its first one, also in the serving
// certificate), a disabled controller does not run, and a bad value stops the server with one line.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestServer, eventually, runSkiff } from '../support/cluster.js';
import { throughout } from '../support/eventually.js';

describe('server flags: service range and controllers', () => {
  const s = new TestServer('server-flags');
  before(async () => {
    await s.start(['--service-cluster-ip-range', '10.96.0.0/12', '--controllers', '*,-resourcequota-controller']);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('gives Services addresses from the range, the first to kubernetes', async () => {
    const ip = (name: string) => s.k(['get', 'svc', name, '-o', 'jsonpath={.spec.clusterIP}']);
    await eventually(async () => (await ip('kubernetes')) === '10.96.0.1', 20_000, 'the kubernetes Service at 10.96.0.1');
    await s.k(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
    const web = (await ip('web')).split('.').map(Number);
    assert.ok(web[0] === 10 && web[1]! >= 96 && web[1]! <= 111, `web got ${web.join('.')}`);
    const r = await s.kubectl(['create', '-f', '-'], { input: 'apiVersion: v1\nkind: Service\nmetadata: {name: outside}\nspec:\n  clusterIP: 10.43.0.5\n  ports: [{port: 80}]\n' });
    assert.match(r.stderr, /failed to allocate IP 10\.43\.0\.5: the provided IP \(10\.43\.0\.5\) is not in the valid range\. The range of valid IPs is 10\.96\.0\.0\/12/);
    const cert = new X509Certificate(readFileSync(join(s.dataDir, 'tls', 'server.crt')));
    assert.match(cert.subjectAltName ?? '', /IP Address:10\.96\.0\.1\b/);
  });

  it('does not run a controller --controllers leaves out', async () => {
    await s.k(['create', 'quota', 'q', '--hard=pods=1']);
    // With the resourcequota controller off nothing counts the quota (with it, within a second).
    await throughout(async () => (await s.k(['get', 'quota', 'q', '-o', 'jsonpath={.status.used}'])) === '', 3000, 'the quota uncounted');
  });

  it('stops at once with one line for a bad value', async () => {
    const big = await runSkiff(['server', '--data-dir', join(s.dataDir, 'never'), '--service-cluster-ip-range', '10.0.0.0/8'], { timeoutMs: 20_000 });
    assert.equal(big.code, 2);
    assert.equal(big.stderr.trim(), 'skiff server: specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12');
    const unknown = await runSkiff(['server', '--data-dir', join(s.dataDir, 'never'), '--controllers', '*,-nodes'], { timeoutMs: 20_000 });
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr.trim(), 'skiff server: --controllers: "nodes" is not in the list of known controllers');
  });
});
