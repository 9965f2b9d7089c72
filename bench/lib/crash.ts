// A crash campaign: writers over the API (ConfigMap creates, counter updates and deletes in one
// namespace) and over the store (bench/lib/crash-store-writer.ts), a watcher that resumes from
// the last resourceVersion it saw, and a target that SIGKILLs its processes — API servers, etcd
// members, the whole cluster — at random moments, seeded. Checked afterwards, as etcd and
// kube-apiserver promise:
//   - every acknowledged write is present with its content (a delete: absent);
//   - revisions only grow, across every restart (a write after a recovery lands above every
//     revision acknowledged before the kill);
//   - no uid is given twice;
//   - the watcher, resuming from its last resourceVersion after each kill, received every
//     acknowledged change exactly once and in order — or was told 410 Gone and relisted, and
//     then only the changes inside that gap may be missing from its stream.
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ApiClient } from '../../src/client/rest.js';
import { isStatusError, StatusError } from '../../src/api/errors.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { openEtcdStore } from '../../src/store/etcd.js';
import type { Store } from '../../src/store/store.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { silentLogger } from '../../src/util/log.js';
import { seededRandom, sleep } from './util.js';

/** What the campaign kills. Each target owns its processes; the campaign owns the writers. */
export interface CrashTarget {
  readonly backend: 'sqlite' | 'etcd';
  /** An admin client over every API server, failing over between them. */
  client(): ApiClient;
  /** Chooses what to kill for this round, SIGKILLs it and waits until it is gone; says what. */
  kill(pick: () => number, round: number): Promise<string>;
  /** Starts what is down again; resolves once the API answers. */
  recover(): Promise<void>;
  /** How the writer over the store reaches its store: `--sqlite FILE` or `--etcd URLS`. */
  storeArgs(): string[];
}

export interface CrashOptions {
  target: CrashTarget;
  kills: number;
  seed: number;
  /** Concurrent API writers (default 8). */
  writers?: number;
  /** Namespace the API writers use; created if missing. */
  namespace?: string;
  /** Progress, one line per kill. */
  onRound?: (round: number, what: string) => void;
}

export interface CrashOutcome {
  kills: number;
  killed: Record<string, number>;
  api: { acknowledged: number; unacknowledged: number; refused: string[]; lost: string[]; wrongContent: string[]; revisionsBackwards: string[]; duplicateUids: string[] };
  store: { acknowledged: number; lost: string[]; revisionsBackwards: string[] };
  watch: { events: number; resumes: number; relists: number; missed: string[]; duplicates: string[]; outOfOrder: string[]; wrongContent: string[] };
}

interface AckedWrite {
  name: string;
  rv: number;
  /** data.v as acknowledged. */
  value: string;
  /** When it was sent (performance.now()): a write sent after a delete was answered lands above it. */
  sentAt: number;
}

/** A delete answered (or answered NotFound): its own revision is not told, only bounds of it. */
interface AnsweredDelete {
  name: string;
  /** Every write acknowledged before it was sent is below it. */
  floor: number;
  answeredAt: number;
  /** Answered NotFound: a copy sent again after a broken connection, or the object was lost. */
  notFound: boolean;
}

/** What the API writers were told, and what they sent without an answer. */
class ApiLedger {
  readonly created = new Map<string, { uid: string; value: string; rv: number }>();
  readonly deleted = new Set<string>();
  readonly deletes: AnsweredDelete[] = [];
  /** Deletes sent without an answer: the object may be gone or not. */
  readonly maybeDeleted = new Set<string>();
  /** Creates sent without an answer: present with this value, or absent. */
  readonly maybeCreated = new Map<string, string>();
  readonly counters = new Map<string, { acked: number; attempted: number }>();
  /** Every acknowledged write with its revision, in the order each writer was answered. */
  readonly writes: AckedWrite[] = [];
  unacknowledged = 0;
  /** Writes the server refused with a 4xx other than 429: none is expected. */
  readonly refused: string[] = [];
  maxRv = 0;
  readonly revisionsBackwards: string[] = [];

  ack(w: AckedWrite): void {
    this.writes.push(w);
    this.maxRv = Math.max(this.maxRv, w.rv);
  }
}

/** The stream a watcher received: events by revision, and the gaps 410 forced it to relist over. */
class WatchRecord {
  readonly events = new Map<number, { type: string; name: string; value: string | undefined }>();
  readonly gaps: [number, number][] = [];
  lastRv = 0;
  /** Streams broken (the server went away) and opened again from the last revision seen. */
  resumes = 0;
  relists = 0;
  readonly duplicates: string[] = [];
  readonly outOfOrder: string[] = [];

  inGap(rv: number): boolean {
    return this.gaps.some(([from, to]) => rv > from && rv <= to);
  }
}

const dataValue = (o: KubeObject): string | undefined => (o as { data?: Record<string, string> }).data?.v;

export async function crashCampaign(o: CrashOptions): Promise<CrashOutcome> {
  const pick = seededRandom(o.seed);
  const ns = o.namespace ?? 'crash';
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  const client = o.target.client();
  const ledger = new ApiLedger();
  const watch = new WatchRecord();
  const killed: Record<string, number> = {};
  let stopping = false;

  await retrying(() => client.create('/api/v1/namespaces', { metadata: { name: ns } }), true);
  // The watcher starts from before the first write, so it must replay every one of them.
  watch.lastRv = Number((await retrying(() => client.list(base, { limit: '1' }))).metadata.resourceVersion);
  const writerCount = o.writers ?? 8;
  for (let w = 0; w < writerCount; w++) {
    const created = await retrying(() => client.create(base, { metadata: { name: `counter-${w}` }, data: { v: '0' } }));
    ledger.counters.set(`counter-${w}`, { acked: 0, attempted: 0 });
    ledger.ack({ name: `counter-${w}`, rv: Number(created.metadata.resourceVersion), value: '0', sentAt: performance.now() });
  }

  const watcherStop = new AbortController();
  const watcher = runWatcher(client, base, watch, watcherStop.signal);
  const storeWriter = new StoreWriter(o.target);
  storeWriter.start();

  const writer = async (w: number): Promise<void> => {
    const mine: string[] = [];
    let n = 0;
    let lastRv = 0;
    const acked = (name: string, obj: KubeObject, value: string, sentAt: number) => {
      const rv = Number(obj.metadata.resourceVersion);
      if (rv <= lastRv) ledger.revisionsBackwards.push(`${name}: writer ${w} was answered ${rv} after ${lastRv}`);
      lastRv = rv;
      ledger.ack({ name, rv, value, sentAt });
    };
    while (!stopping) {
      const roll = Math.random();
      const sentAt = performance.now();
      try {
        if (roll < 0.5 || mine.length === 0) {
          const name = `c-${w}-${n++}`;
          const value = `${name}-${Math.random().toString(36).slice(2, 10)}`;
          ledger.maybeCreated.set(name, value);
          const obj = await client.create(base, { metadata: { name }, data: { v: value } });
          ledger.maybeCreated.delete(name);
          ledger.created.set(name, { uid: obj.metadata.uid!, value, rv: Number(obj.metadata.resourceVersion) });
          acked(name, obj, value, sentAt);
          mine.push(name);
        } else if (roll < 0.8) {
          const name = `counter-${w}`;
          const c = ledger.counters.get(name)!;
          const next = c.attempted + 1;
          c.attempted = next;
          const obj = await client.patch(`${base}/${name}`, { data: { v: String(next) } });
          c.acked = next;
          acked(name, obj, String(next), sentAt);
        } else {
          const name = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]!;
          ledger.maybeDeleted.add(name);
          const floor = ledger.maxRv;
          let notFound = false;
          try {
            await client.delete(`${base}/${name}`);
          } catch (e) {
            // Sent again after a broken connection, a delete that had already landed finds nothing;
            // so would one of an object a crash lost: the watcher must have seen it deleted.
            if (!isStatusError(e, 'NotFound')) throw e;
            notFound = true;
          }
          ledger.maybeDeleted.delete(name);
          ledger.deleted.add(name);
          ledger.deletes.push({ name, floor, answeredAt: performance.now(), notFound });
        }
      } catch (e) {
        ledger.unacknowledged++;
        const code = e instanceof StatusError ? e.status.code ?? 0 : 0;
        // A 4xx other than 429 is no crash's doing: the server refused a write it should have taken.
        if (code >= 400 && code < 500 && code !== 429) ledger.refused.push(`${code} ${e instanceof Error ? e.message : String(e)}`);
        await sleep(50);
      }
    }
  };
  const writers = Array.from({ length: writerCount }, (_, w) => writer(w));

  try {
    for (let round = 1; round <= o.kills; round++) {
      await sleep(300 + pick() * 900);
      const storeToo = pick() < 0.3;
      const what = await o.target.kill(pick, round);
      // Everything acknowledged until the kill took effect.
      const before = ledger.maxRv;
      if (storeToo) await storeWriter.kill();
      killed[what] = (killed[what] ?? 0) + 1;
      if (storeToo) killed['store writer'] = (killed['store writer'] ?? 0) + 1;
      await o.target.recover();
      if (storeToo) storeWriter.start();
      // Revisions only grow: the first write after the restart lands above all acknowledged before.
      const probe = await retrying(() => client.create(base, { metadata: { name: `probe-${round}` }, data: { v: `probe-${round}` } }));
      const rv = Number(probe.metadata.resourceVersion);
      if (rv <= before) ledger.revisionsBackwards.push(`round ${round} (${what}): a write after recovery got ${rv}, at or below ${before} acknowledged before`);
      ledger.created.set(`probe-${round}`, { uid: probe.metadata.uid!, value: `probe-${round}`, rv });
      ledger.ack({ name: `probe-${round}`, rv, value: `probe-${round}`, sentAt: performance.now() });
      o.onRound?.(round, what);
    }
  } finally {
    stopping = true;
  }
  await Promise.all(writers);
  await storeWriter.kill();

  // The watcher has caught up once it has passed the revision of a final list.
  const final = await retrying(() => client.list<KubeObject>(base, {}));
  const finalRv = Number(final.metadata.resourceVersion);
  const deadline = Date.now() + 60_000;
  while (watch.lastRv < finalRv && Date.now() < deadline) await sleep(100);
  watcherStop.abort();
  await watcher;

  const outcome: CrashOutcome = {
    kills: o.kills,
    killed,
    api: checkApi(ledger, final),
    store: await storeWriter.check(o.target),
    watch: checkWatch(ledger, watch, finalRv),
  };
  return outcome;
}

function checkApi(ledger: ApiLedger, final: KubeList<KubeObject>): CrashOutcome['api'] {
  const stored = new Map(final.items.map((i) => [i.metadata.name!, i]));
  const lost: string[] = [];
  const wrongContent: string[] = [];
  for (const [name, c] of ledger.created) {
    const s = stored.get(name);
    if (ledger.deleted.has(name) || ledger.maybeDeleted.has(name)) continue;
    if (!s) lost.push(`${name} (created at ${c.rv})`);
    else if (s.metadata.uid !== c.uid || dataValue(s) !== c.value) wrongContent.push(`${name}: uid ${s.metadata.uid} v ${dataValue(s)}, acknowledged uid ${c.uid} v ${c.value}`);
  }
  for (const name of ledger.deleted) if (stored.has(name)) lost.push(`${name} (deleted, still there)`);
  for (const [name, value] of ledger.maybeCreated) {
    const s = stored.get(name);
    if (s && dataValue(s) !== value) wrongContent.push(`${name}: unacknowledged create stored ${dataValue(s)}, sent ${value}`);
  }
  for (const [name, c] of ledger.counters) {
    const v = Number(dataValue(stored.get(name) ?? ({ metadata: {} } as KubeObject)) ?? NaN);
    if (!(v >= c.acked && v <= c.attempted)) lost.push(`${name}: holds ${v}, acknowledged ${c.acked}, sent up to ${c.attempted}`);
  }
  const uids = new Map<string, string>();
  const duplicateUids: string[] = [];
  for (const i of final.items) {
    const other = uids.get(i.metadata.uid!);
    if (other) duplicateUids.push(`${i.metadata.uid}: ${other} and ${i.metadata.name}`);
    uids.set(i.metadata.uid!, i.metadata.name!);
  }
  // A uid handed out twice would also show as two acknowledged creates with one uid.
  const ackedUids = new Map<string, string>();
  for (const [name, c] of ledger.created) {
    const other = ackedUids.get(c.uid);
    if (other) duplicateUids.push(`${c.uid}: acknowledged for ${other} and ${name}`);
    ackedUids.set(c.uid, name);
  }
  return { acknowledged: ledger.writes.length + ledger.deleted.size, unacknowledged: ledger.unacknowledged, refused: ledger.refused, lost, wrongContent, revisionsBackwards: ledger.revisionsBackwards, duplicateUids };
}

function checkWatch(ledger: ApiLedger, watch: WatchRecord, finalRv: number): CrashOutcome['watch'] {
  const missed: string[] = [];
  const wrongContent: string[] = [];
  for (const w of ledger.writes) {
    if (w.rv > finalRv) continue;
    const ev = watch.events.get(w.rv);
    if (!ev) {
      if (!watch.inGap(w.rv)) missed.push(`${w.name} at ${w.rv}`);
    } else if (ev.name !== w.name || (ev.type !== 'DELETED' && ev.value !== w.value)) {
      wrongContent.push(`${w.rv}: event ${ev.type} ${ev.name} v ${ev.value}, acknowledged ${w.name} v ${w.value}`);
    }
  }
  // A delete's revision lies above every write acknowledged before it was sent, and below every
  // write sent after it was answered; only a 410 gap overlapping that span excuses a missing event.
  const deletedSeen = new Set([...watch.events.values()].filter((e) => e.type === 'DELETED').map((e) => e.name));
  const bySent = [...ledger.writes].sort((a, b) => a.sentAt - b.sentAt);
  // The lowest revision among the writes sent from each position on.
  const suffixMin: number[] = new Array<number>(bySent.length + 1).fill(finalRv);
  for (let i = bySent.length - 1; i >= 0; i--) suffixMin[i] = Math.min(bySent[i]!.rv, suffixMin[i + 1]!);
  for (const d of ledger.deletes) {
    if (deletedSeen.has(d.name)) continue;
    let lo = 0;
    let hi = bySent.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (bySent[mid]!.sentAt <= d.answeredAt) lo = mid + 1;
      else hi = mid;
    }
    const ceiling = suffixMin[lo]!;
    if (!watch.gaps.some(([from, to]) => to > d.floor && from < ceiling)) missed.push(`${d.name} deleted${d.notFound ? ' (answered NotFound)' : ''}, between ${d.floor} and ${ceiling}`);
  }
  return { events: watch.events.size, resumes: watch.resumes, relists: watch.relists, missed, duplicates: watch.duplicates, outOfOrder: watch.outOfOrder, wrongContent };
}

/** Watches from the last revision seen, resuming after every broken stream; relists on 410. */
async function runWatcher(client: ApiClient, base: string, rec: WatchRecord, signal: AbortSignal): Promise<void> {
  let broken = false;
  while (!signal.aborted) {
    try {
      for await (const ev of client.watch<KubeObject>(base, { resourceVersion: String(rec.lastRv), allowWatchBookmarks: 'true' }, signal)) {
        if (broken) rec.resumes++;
        broken = false;
        const rv = Number(ev.object.metadata.resourceVersion);
        if (ev.type === 'BOOKMARK') {
          if (rv > rec.lastRv) rec.lastRv = rv;
          continue;
        }
        if (rec.events.has(rv)) rec.duplicates.push(`${ev.type} ${ev.object.metadata.name} at ${rv}`);
        else if (rv <= rec.lastRv) rec.outOfOrder.push(`${ev.type} ${ev.object.metadata.name} at ${rv} after ${rec.lastRv}`);
        rec.events.set(rv, { type: ev.type, name: ev.object.metadata.name!, value: dataValue(ev.object) });
        if (rv > rec.lastRv) rec.lastRv = rv;
      }
    } catch (e) {
      if (signal.aborted) return;
      broken = true;
      if (isStatusError(e) && e.status.code === 410) {
        const list = await client.list(base, {}).catch(() => undefined);
        if (list) {
          const rv = Number(list.metadata.resourceVersion);
          rec.gaps.push([rec.lastRv, rv]);
          rec.lastRv = rv;
          rec.relists++;
        }
      }
      await sleep(100);
    }
  }
}

/** Runs `fn` until it succeeds (the cluster is recovering), for at most two minutes. */
async function retrying<T>(fn: () => Promise<T>, alreadyExistsIsFine = false): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (alreadyExistsIsFine && isStatusError(e, 'AlreadyExists')) return undefined as T;
      if (Date.now() > deadline) throw e;
      await sleep(200);
    }
  }
}

const STORE_PREFIX = '/crash-store/';
const STORE_WRITER = fileURLToPath(new URL('./crash-store-writer.js', import.meta.url));

/** The writer over the store, as a child process it can SIGKILL, and what it was told. */
class StoreWriter {
  private proc?: ManagedProcess;
  private starts = 0;
  readonly creates = new Map<string, { rv: number; value: string }>();
  counterAcked = 0;
  private lastRv = 0;
  readonly revisionsBackwards: string[] = [];

  constructor(private readonly target: CrashTarget) {}

  start(): void {
    // Each run starts at a fresh index, so no key is ever written by two runs.
    const first = this.starts++ * 10_000_000;
    const proc = startProcess({ name: 'crash-store-writer', command: process.execPath, args: [STORE_WRITER, ...this.target.storeArgs(), '--prefix', STORE_PREFIX, '--first', String(first)], output: 'pipe' });
    this.proc = proc;
    const lines = createInterface({ input: proc.child.stdout! });
    lines.on('line', (line) => {
      const [kind, a, b, c] = line.split(' ');
      if (kind === 'create') this.acked(a!, Number(b), () => this.creates.set(a!, { rv: Number(b), value: c! }));
      else if (kind === 'counter') this.acked(`counter=${a}`, Number(b), () => (this.counterAcked = Math.max(this.counterAcked, Number(a))));
    });
    proc.child.stderr?.resume();
  }

  private acked(what: string, rv: number, record: () => void): void {
    if (rv <= this.lastRv) this.revisionsBackwards.push(`${what} acknowledged at ${rv} after ${this.lastRv}`);
    this.lastRv = rv;
    record();
  }

  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    p?.signal('SIGKILL');
    await p?.exited;
  }

  /** Reads the store itself (the writer is dead) and compares with what was acknowledged. */
  async check(target: CrashTarget): Promise<CrashOutcome['store']> {
    const args = target.storeArgs();
    const store: Store =
      args[0] === '--sqlite'
        ? await openSqliteStore({ path: args[1]!, maintenanceIntervalMs: 0 })
        : await openEtcdStore({ endpoints: args[1]!.split(','), compactIntervalMs: 0, log: silentLogger() });
    try {
      const lost: string[] = [];
      for (const [key, c] of this.creates) {
        const kv = await store.get(key);
        if (!kv || kv.value !== c.value) lost.push(`${key} (acknowledged at ${c.rv}): ${kv ? `holds ${kv.value}` : 'absent'}`);
      }
      const counter = await store.get(`${STORE_PREFIX}counter`);
      if (Number(counter?.value ?? 0) < this.counterAcked) lost.push(`counter holds ${counter?.value}, acknowledged ${this.counterAcked}`);
      return { acknowledged: this.creates.size + this.counterAcked, lost, revisionsBackwards: this.revisionsBackwards };
    } finally {
      await store.close();
    }
  }
}
