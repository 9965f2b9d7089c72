// `skiff image load` finds the containerds of the `up` cluster in the current directory (or
// --data-dir), and says in one line what is missing when it cannot load: no cluster here, a
// cluster without containerd, a node that has none, a containerd that is not running.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSkiff } from '../support/cluster.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-image-load-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('image load names what is missing, from the cluster in the current directory', async () => {
  const none = await runSkiff(['image', 'load', 'x.tar'], { cwd: root });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^skiff image: \S+\/\.skiff holds no cluster: run this in the directory of a skiff up, or pass --data-dir DIR\n$/);

  const cluster = join(root, '.skiff');
  mkdirSync(cluster);
  writeFileSync(join(cluster, 'cluster.json'), '{"storage":"sqlite","etcdMembers":0}\n');
  const processOnly = await runSkiff(['image', 'load', 'x.tar'], { cwd: root });
  assert.match(processOnly.stderr, /runs no containerd: images are for nodes on --runtime containerd/);

  mkdirSync(join(cluster, 'containerd', 'node-1'), { recursive: true });
  const unknown = await runSkiff(['image', 'load', 'x.tar', '--node', 'node-9'], { cwd: root });
  assert.match(unknown.stderr, /no node node-9 with a containerd in \S+; its nodes: node-1/);
  const stopped = await runSkiff(['image', 'load', 'x.tar'], { cwd: root });
  assert.match(stopped.stderr, /^skiff image: the containerd of node node-1 is not running \(no \S+\/containerd\/node-1\/containerd\.sock\): start the cluster/);
});
