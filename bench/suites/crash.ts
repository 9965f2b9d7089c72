// Suite `crash`: the crash campaign (bench/lib/crash.ts) at length — 60 random SIGKILLs of the
// server on SQLite, then 60 on an HA control plane on etcd (one API server or one etcd member at a
// time, the whole cluster every eighth round), 12 and 9 with --quick. Reported per backend: kills
// by what was killed, writes acknowledged and lost (goal 0), revisions that went backwards, uids
// given twice, and the resuming watcher's events, resumes, 410 relists, misses and duplicates.
import { performance } from 'node:perf_hooks';
import { crashCampaign, type CrashOutcome } from '../lib/crash.js';
import { etcdTarget, sqliteTarget, WHOLE_CLUSTER_EVERY, type OwnedTarget } from '../lib/crash-targets.js';
import { etcdInstalled } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtInt, progress, round, type Table } from '../lib/util.js';

async function run(name: string, start: () => Promise<OwnedTarget>, kills: number, seed: number): Promise<{ out: CrashOutcome; seconds: number }> {
  const target = await start();
  const t = performance.now();
  try {
    const out = await crashCampaign({ target, kills, seed, onRound: (r, what) => progress(`crash ${name}: kill ${r}/${kills}: ${what}`) });
    return { out, seconds: (performance.now() - t) / 1000 };
  } finally {
    await target.destroy();
  }
}

function rows(o: CrashOutcome): string[] {
  const n = (l: string[]) => String(l.length);
  return [
    Object.entries(o.killed).map(([what, k]) => `${what}: ${k}`).join('; '),
    `${fmtInt(o.api.acknowledged)} / ${fmtInt(o.store.acknowledged)}`,
    `${n(o.api.lost)} / ${n(o.store.lost)}`,
    n([...o.api.wrongContent, ...o.api.refused]),
    n([...o.api.revisionsBackwards, ...o.store.revisionsBackwards]),
    n(o.api.duplicateUids),
    `${fmtInt(o.watch.events)} events, ${o.watch.resumes} resumed, ${o.watch.relists} relisted after 410`,
    `${n(o.watch.missed)} / ${n(o.watch.duplicates)} / ${n(o.watch.outOfOrder)} / ${n(o.watch.wrongContent)}`,
  ];
}

const LABELS = [
  'SIGKILLs',
  'writes acknowledged (API / store)',
  'acknowledged writes lost (API / store)',
  'content differing from acknowledged, writes refused',
  'revisions that went backwards',
  'uids given twice',
  'watcher resuming from its last resourceVersion',
  'watch: missed / twice / out of order / wrong content',
];
const GOALS = ['≥ 50 per backend', '', '0', '0', '0', '0', '', '0 / 0 / 0 / 0'];

export const crashSuite: Suite = {
  name: 'crash',
  description: 'random SIGKILLs of servers and etcd members under API and store writers and a resuming watcher: nothing acknowledged lost',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const kills = Number(process.env.SKIFF_BENCH_CRASH_KILLS ?? (ctx.quick ? 12 : 60));
    const sqlite = await run('SQLite', sqliteTarget, kills, 1);
    const etcdKills = ctx.quick ? WHOLE_CLUSTER_EVERY + 1 : kills;
    const etcd = etcdInstalled() ? await run('etcd', etcdTarget, etcdKills, 2) : undefined;
    const s = rows(sqlite.out);
    const e = etcd ? rows(etcd.out) : undefined;
    const table: Table = {
      title: `crash: ${kills} SIGKILLs on SQLite, ${etcd ? etcdKills : 0} on a 2-server control plane over a 3-member etcd (2 cores)`,
      headers: ['figure', 'SQLite', 'etcd', 'goal'],
      rows: LABELS.map((label, i) => [label, s[i]!, e?.[i] ?? 'etcd not installed', GOALS[i]!]),
      notes: [
        `run time: SQLite ${round(sqlite.seconds, 0)} s${etcd ? `, etcd ${round(etcd.seconds, 0)} s` : ''}; a restarted server's watch cache starts at the store's revision, so a watch resuming from before the restart is answered 410 and relists, as kube-apiserver's does`,
      ],
    };
    return { tables: [table], data: { kills, sqlite: sqlite.out, ...(etcd ? { etcd: etcd.out } : {}) } };
  },
};
