// Which kubeconfig skiff's operator commands (kubectl, token, node retire, haproxy-config) use.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminKubeconfig } from '../../src/cli/admin-client.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-admin-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function withEnv<T>(env: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
  else process.env[k] = v;
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

test('--kubeconfig, then --data-dir, then $SKIFF_KUBECONFIG or $KUBECONFIG (its first file); a missing one names the way out', () => {
  const explicit = join(dir, 'explicit');
  const inDir = join(dir, 'cluster', 'kubeconfig');
  const fromEnv = join(dir, 'env');
  mkdirSync(join(dir, 'cluster'));
  for (const f of [explicit, inDir, fromEnv]) writeFileSync(f, '');
  withEnv({ SKIFF_KUBECONFIG: undefined, KUBECONFIG: `${fromEnv}:${join(dir, 'second')}` }, () => {
    assert.equal(adminKubeconfig({ kubeconfig: explicit, dataDir: join(dir, 'cluster') }), explicit);
    assert.equal(adminKubeconfig({ dataDir: join(dir, 'cluster') }), inDir, '--data-dir wins over $KUBECONFIG');
    assert.equal(adminKubeconfig({}), fromEnv, 'what up tells users to export');
    assert.throws(() => adminKubeconfig({ dataDir: join(dir, 'none') }), /no kubeconfig at .*none\/kubeconfig: start a cluster \(skiff up\) and run this in its directory, or name one with --data-dir DIR, --kubeconfig FILE or \$KUBECONFIG/);
  });
  withEnv({ SKIFF_KUBECONFIG: explicit, KUBECONFIG: fromEnv }, () => assert.equal(adminKubeconfig({}), explicit, '$SKIFF_KUBECONFIG first'));
});

test('the cluster in the current directory (.skiff/kubeconfig) comes before $KUBECONFIG, which may name every cluster of the machine', () => {
  const here = join(dir, 'project');
  mkdirSync(join(here, '.skiff'), { recursive: true });
  writeFileSync(join(here, '.skiff', 'kubeconfig'), '');
  const fromEnv = join(dir, 'env-here');
  writeFileSync(fromEnv, '');
  const cwd = process.cwd();
  process.chdir(here);
  try {
    withEnv({ SKIFF_KUBECONFIG: undefined, KUBECONFIG: fromEnv }, () => {
      assert.equal(adminKubeconfig({}), join(here, '.skiff', 'kubeconfig'));
      rmSync(join(here, '.skiff'), { recursive: true });
      assert.equal(adminKubeconfig({}), fromEnv, 'no cluster here: the environment');
    });
  } finally {
    process.chdir(cwd);
  }
});
