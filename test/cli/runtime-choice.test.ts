import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeChoiceLine } from '../../src/cli/runtime-choice.js';

test('up says in one line how its nodes run pods, and whether real images are within reach', () => {
  assert.equal(
    runtimeChoiceLine({ runtime: 'process', explicit: false, missingForContainerd: [] }),
    'nodes run pods as host processes, their images unused (--runtime process, the default); real images: --runtime containerd (containerd, runc and the CNI plugins are here)',
  );
  assert.equal(
    runtimeChoiceLine({ runtime: 'process', explicit: false, missingForContainerd: ['containerd (Debian: containerd)', 'root (containers need namespaces, cgroups and mounts)'] }),
    'nodes run pods as host processes, their images unused (--runtime process, the default); real images need --runtime containerd, which needs containerd (Debian: containerd), root (containers need namespaces, cgroups and mounts)',
  );
  // A runtime the user chose needs no advice.
  assert.equal(runtimeChoiceLine({ runtime: 'containerd', explicit: true, missingForContainerd: [] }), 'nodes run pods as real OCI containers through containerd (--runtime containerd)');
  assert.equal(runtimeChoiceLine({ runtime: 'process', explicit: true, missingForContainerd: ['x'] }), 'nodes run pods as host processes, their images unused (--runtime process)');
});
