import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NODE_VERSION, SKIFF_VERSION, userAgent } from '../../src/version.js';

test('the version is written once, and is package.json’s', () => {
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string };
  assert.equal(SKIFF_VERSION, pkg.version);
  assert.equal(NODE_VERSION, `v1.32.0-skiff.${pkg.version}`);
  assert.equal(userAgent('skiff-agent', 'node-1'), `skiff-agent/${pkg.version} (node-1)`);
});
