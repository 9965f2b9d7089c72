// The agent's resource usage endpoints on its kubelet port: /stats/summary and /metrics/resource,
// to the API server's kubelet client; refused to other callers, naming the node subresource.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogServer } from '../../src/agent/log-server.js';
import type { StatsReading } from '../../src/agent/stats-provider.js';
import { ensureClusterPki, type ClusterPki } from '../../src/pki/cluster-pki.js';
import { issueCertificate, type IssuedCertificate } from '../../src/pki/certificates.js';
import { silentLogger } from '../../src/util/log.js';

describe('the agent’s stats endpoints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-stats-endpoints-'));
  let pki: ClusterPki;
  let stranger: IssuedCertificate;
  let server: LogServer;
  let port: number;
  let reading: StatsReading;
  before(async () => {
    pki = await ensureClusterPki(dir, ['127.0.0.1']);
    stranger = await issueCertificate(pki.ca, { commonName: 'stranger', usage: 'client' });
    server = new LogServer({ host: '127.0.0.1', port: 0, certPem: pki.server.certPem, keyPem: pki.server.keyPem, caPem: pki.ca.certPem, log: silentLogger(), lookup: () => undefined, stats: async () => reading });
    port = await server.start();
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, cert: IssuedCertificate): Promise<{ code: number; type: string; body: string }> =>
    new Promise((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port, path, ca: pki.ca.certPem, cert: cert.certPem, key: cert.keyPem }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
        })
        .on('error', reject);
    });

  it('serves the summary as JSON and the resource metrics as Prometheus text', async () => {
    const t = Date.parse('2026-12-01T00:00:00Z');
    reading = { report: { nodeName: 'n1', nodeStartedAtMs: t, node: { timestampMs: t, cpuCoreNanoSeconds: 5e9, memoryWorkingSetBytes: 1e9 }, pods: [{ name: 'p', namespace: 'default', uid: 'u', startedAtMs: t, containers: [{ name: 'c', startedAtMs: t, usage: { timestampMs: t, cpuCoreNanoSeconds: 1e9, nanoCores: 1e6, memoryWorkingSetBytes: 4096 } }] }] } };
    const summary = await get('/stats/summary', pki.kubeletClient);
    assert.equal(summary.code, 200);
    assert.equal(summary.type, 'application/json');
    const s = JSON.parse(summary.body) as { node: { nodeName: string }; pods: { containers: { cpu: { usageNanoCores: number } }[] }[] };
    assert.equal(s.node.nodeName, 'n1');
    assert.equal(s.pods[0]!.containers[0]!.cpu.usageNanoCores, 1e6);
    const text = await get('/metrics/resource', pki.kubeletClient);
    assert.equal(text.code, 200);
    assert.match(text.type, /^text\/plain; version=0\.0\.4/);
    assert.match(text.body, /^container_cpu_usage_seconds_total\{container="c",namespace="default",pod="p"\} 1 1796083200000$/m);
  });

  it('a runtime that cannot be read: a 500 for the summary, resource_scrape_error 1 for the metrics', async () => {
    reading = { ...reading, error: 'containerd down' };
    const summary = await get('/stats/summary', pki.admin);
    assert.equal(summary.code, 500);
    assert.match(summary.body, /failed to get container stats: containerd down/);
    assert.match((await get('/metrics/resource', pki.admin)).body, /^resource_scrape_error 1$/m);
  });

  it('refuses other callers, naming the subresource the kubelet authorizes the path as', async () => {
    assert.match((await get('/stats/summary', stranger)).body, /^Forbidden \(user=stranger, verb=get, resource=nodes, subresource=stats\)$/);
    assert.match((await get('/metrics/resource', stranger)).body, /subresource=metrics\)$/);
    assert.match((await get('/containerLogs/a/b/c', stranger)).body, /subresource=proxy\)$/);
  });
});
