import { test } from 'node:test';
import assert from 'node:assert/strict';
import { storageVersionHash } from '../../src/apiserver/discovery.js';

test("discovery's storageVersionHash is upstream's: 8 bytes of sha256 of group/version/kind, base64 with padding", () => {
  // Values a Kubernetes 1.32 apiserver serves in its discovery documents.
  assert.equal(storageVersionHash('', 'v1', 'Pod'), 'xPOwRZ+Yhw8=');
  assert.equal(storageVersionHash('apps', 'v1', 'Deployment'), '8aSe+NMegvE=');
});
