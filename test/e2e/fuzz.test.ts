// Hostile input, seeded and reproducible: a real server takes thousands of mutated requests
// (bodies, nesting, encodings, selectors, patches, query parameters, paths) on every verb of a
// set of resources; every answer is a success or a Kubernetes Status, never a 500, and the server
// is still up and ready afterwards. `npm run bench -- fuzz` sends 100,000.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TestServer } from '../support/cluster.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { fuzz } from '../../bench/lib/fuzz.js';

describe('hostile input', () => {
  const s = new TestServer('fuzz');
  before(async () => {
    await s.start();
    await s.k(['create', 'namespace', 'fuzz']);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('answers every one of 6,000 mutated requests (three seeds) with a success or a Status, and stays up', async () => {
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    for (const seed of [1, 7, 11]) {
      const out = await fuzz({ server: kc.server, caPem: kc.caPem!, certPem: kc.clientCertPem!, keyPem: kc.clientKeyPem!, seed, requests: 2_000 });
      assert.equal(out.requests, 2_000);
      assert.deepEqual(out.findings, [], `seed ${seed}: ${JSON.stringify(out.byCode)}`);
      assert.ok((out.byCode[400] ?? 0) > 0 && (out.byCode[200] ?? 0) > 0, `seed ${seed} tried good and bad requests: ${JSON.stringify(out.byCode)}`);
    }
    assert.equal(s.proc!.child.exitCode, null, 'the server never exited');
    assert.match(await s.k(['get', '--raw', '/readyz']), /ok/);
  });
});
