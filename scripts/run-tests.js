#!/usr/bin/env node
// Runs every compiled test file with node's test runner. Unit tests first (fast feedback), then
// end-to-end tests, which start real processes and so run one file at a time.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

const filter = process.argv.slice(2);
let files = find('dist/test');
if (filter.length > 0) files = files.filter((f) => filter.some((x) => f.includes(x)));
const unit = files.filter((f) => !f.includes('/e2e/'));
const e2e = files.filter((f) => f.includes('/e2e/'));
// A test that hangs fails after 5 minutes instead of eating CI's time; a file whose tests are done
// exits even if a stray handle would keep its process alive.
const args = ['--test', '--test-reporter=spec', '--test-concurrency=1', '--test-timeout=300000', '--test-force-exit', ...unit, ...e2e];
// Objects a server shares with its own read-only informers are frozen under test (and in every
// server the tests start), so code that changes one fails loudly instead of corrupting a cache.
const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, SKIFF_FREEZE_SHARED: '1' } });
process.exit(r.status ?? 1);
