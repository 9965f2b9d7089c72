// The crash campaign (bench/lib/crash.ts) in CI: writers over the API and over the store, a
// watcher resuming from its last resourceVersion, and random SIGKILLs — of the server on SQLite;
// of API servers, etcd members and (once) the whole cluster on etcd. Nothing acknowledged may be
// lost, revisions only grow, no uid repeats, and the watcher sees every change exactly once in
// order or is told 410 and relists. `npm run bench -- crash` runs 60 kills on each backend.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crashCampaign, type CrashOutcome } from '../../bench/lib/crash.js';
import { etcdTarget, sqliteTarget, type OwnedTarget } from '../../bench/lib/crash-targets.js';

function assertNothingLost(out: CrashOutcome): void {
  const findings = {
    refused: out.api.refused,
    lost: out.api.lost,
    wrongContent: out.api.wrongContent,
    revisionsBackwards: [...out.api.revisionsBackwards, ...out.store.revisionsBackwards],
    duplicateUids: out.api.duplicateUids,
    storeLost: out.store.lost,
    watchMissed: out.watch.missed,
    watchDuplicates: out.watch.duplicates,
    watchOutOfOrder: out.watch.outOfOrder,
    watchWrongContent: out.watch.wrongContent,
  };
  for (const [what, list] of Object.entries(findings)) assert.deepEqual(list.slice(0, 10), [], `${what} (${list.length})`);
  assert.ok(out.api.acknowledged > 100 && out.store.acknowledged > 100, `writers were answered: ${JSON.stringify({ api: out.api.acknowledged, store: out.store.acknowledged })}`);
  assert.ok(out.watch.events > 100 && out.watch.resumes + out.watch.relists > 0, `the watcher streamed through the kills: ${JSON.stringify(out.watch)}`);
}

async function campaign(target: OwnedTarget, kills: number, seed: number): Promise<CrashOutcome> {
  try {
    return await crashCampaign({ target, kills, seed });
  } finally {
    await target.destroy();
  }
}

describe('crash campaign', () => {
  it('SIGKILLs the server on SQLite 10 times under writers and a watcher: nothing acknowledged lost, every change seen once', async () => {
    const out = await campaign(await sqliteTarget(), 10, 20);
    assert.equal(out.killed['server on SQLite'], 10);
    assertNothingLost(out);
  });

  it('SIGKILLs API servers, etcd members and the whole etcd cluster: nothing acknowledged lost, every change seen once', async () => {
    // A whole-cluster kill in the fourth round, single members and servers around it.
    const kills = 5;
    const out = await campaign(await etcdTarget({ wholeClusterEvery: 4 }), kills, 3);
    assert.equal(Object.values(out.killed).reduce((a, b) => a + b, 0) - (out.killed['store writer'] ?? 0), kills);
    assert.equal(out.killed['whole cluster (every etcd member and API server)'], 1);
    assertNothingLost(out);
  });
});
