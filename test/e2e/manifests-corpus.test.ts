// Install bundles people actually apply (a folder of them, given by SKIFF_MANIFESTS_DIR), applied
// with real kubectl server-side on one fresh server and client-side on another, each object read
// back unchanged. The project does not carry the bundles: without the folder the test says so and
// skips.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TestServer } from '../support/cluster.js';
import { applyFolder, formatReport, readBundles, unexpected } from '../support/manifest-folder.js';

const FALLBACK = fileURLToPath(new URL('../../../../shared/reference/upstream-data/manifests-corpus', import.meta.url));
const dir = process.env.SKIFF_MANIFESTS_DIR ?? (existsSync(FALLBACK) ? FALLBACK : undefined);
const skip = dir === undefined || !existsSync(dir) ? `no manifests folder (set SKIFF_MANIFESTS_DIR to a folder of bundles; ${dir ?? FALLBACK} is absent)` : false;

describe('a folder of install bundles applied with kubectl', { skip }, () => {
  const serverSide = new TestServer('corpus-ssa');
  const clientSide = new TestServer('corpus-csa');
  before(async () => {
    await Promise.all([serverSide.start(), clientSide.start()]);
  });
  after(async () => {
    await Promise.all([serverSide.stop(), clientSide.stop()]);
    serverSide.cleanup();
    clientSide.cleanup();
  });

  it('accepts every object server-side and client-side and reads it back unchanged, but for the kinds listed as not served yet', { timeout: 240_000 }, async () => {
    const bundles = readBundles(dir!);
    assert.ok(bundles.length > 0, `${dir} has no bundle folders`);
    const reports = await applyFolder(
      {
        'server-side': { kubeconfig: serverSide.kubeconfig, cacheDir: serverSide.cacheDir },
        'client-side': { kubeconfig: clientSide.kubeconfig, cacheDir: clientSide.cacheDir },
      },
      bundles,
    );
    console.log(formatReport(reports));
    assert.deepEqual(unexpected(reports), []);
  });
});
