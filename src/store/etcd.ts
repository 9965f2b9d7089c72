// The etcd backend: the same Store as SQLite, on an etcd cluster (HA), through the etcd3 client.
//
// Mapping. Keys are the same '/registry/...' strings, values the JSON text as-is. etcd's global
// revision is the store revision and a key's mod_revision its resourceVersion, so nothing is
// translated. Each write is one etcd transaction, evaluated atomically by etcd:
//   create  if version(key) == 0                      then put                else (exists)
//   update  if mod(key) == expected && version(key)>0 then put (prev_kv)      else range key
//   delete  if [mod(key) == expected &&] version > 0  then delete (prev_kv)   else range key
// A failed transaction uses no revision; on failure the range tells 'not-found' from 'conflict'
// and carries the current value. Writes to one key are sent one at a time in submission order
// (etcd would order concurrent requests arbitrarily; SQLite's single writer keeps that order).
// Reads are linearizable ranges (at a revision for lists at a revision); `more` and `remaining`
// come from the range response's more/count.
//
// Watches: see etcd-watch.ts (one stream per watch, resume at position+1, progress ordering).
// currentRevision() also asks lagging watches for a progress notification, because the API
// server's watch cache waits for its watch to reach the revision it just read.
//
// Compaction: compact() is etcd's compaction. compactRevision() is not exposed by etcd's API;
// it is the largest compact revision this store has seen (its own compactions, compacted
// errors), confirmed by a range at that revision, and otherwise learned from a watch started
// below it, which etcd answers with the compact revision. With compactIntervalMs, the store
// compacts periodically like the Kubernetes API server: to the revision it saw one interval ago
// (so at least one interval of history is kept), and never the last compactMinRetain revisions.
// Several servers on one cluster compacting at about the same time is harmless (the later
// request is a no-op).
//
// Failures: see etcd-client.ts. Every call is bounded by requestTimeoutMs and fails with a
// StoreError 'unavailable' whose message says why ("etcd member has no leader, the cluster has
// likely lost quorum (http://...)"); health() answers within healthTimeoutMs with the same
// reason; watches keep reconnecting on their own and resume without a gap when etcd is back.

import { errorText } from '../util/error-text.js';
import type { IRangeRequest, IRangeResponse, ITxnRequest, ITxnResponse } from 'etcd3';
import { systemClock, type Clock, type Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { describeFailure, EtcdCluster, isCompactedError, isFutureRevisionError, rpcError, type EtcdEndpoint, type EtcdTlsOptions } from './etcd-client.js';
import { EtcdWatch, prefixRange, toKeyValue } from './etcd-watch.js';
import { StoreError, type KeyValue, type ListOptions, type ListResult, type Store, type StoreEvent, type WriteOptions } from './store.js';

export type { EtcdTlsOptions } from './etcd-client.js';

export interface EtcdStoreOptions {
  /** etcd client URLs, e.g. ['http://10.0.0.1:2379', 'http://10.0.0.2:2379']. */
  endpoints: string[];
  /** How long open() waits for the cluster to answer a linearizable read. Default 5 s. */
  dialTimeoutMs?: number;
  /** Deadline of every call, failover included. Default 5 s. */
  requestTimeoutMs?: number;
  /** Deadline of health(). Default 2 s (never more than requestTimeoutMs). */
  healthTimeoutMs?: number;
  tls?: EtcdTlsOptions;
  /** Start with a random endpoint (default), spreading servers over members; false: the first one. */
  randomizeEndpoints?: boolean;
  /** Period of automatic compaction; 0 disables it. Default 5 minutes. */
  compactIntervalMs?: number;
  /** Revisions automatic compaction never removes. Default 1000. */
  compactMinRetain?: number;
  /** Events a watch may hold unconsumed before its stream is paused. Default 10,000. */
  watchBufferSize?: number;
  /**
   * Whether watches may send WatchProgressRequests. Default: only when the etcd version answers
   * them in order with events (>= 3.4.31 / 3.5.13 / 3.6); older ones rely on periodic notifications.
   */
  progressRequests?: boolean;
  /** Drives the compaction timer. Default: the system clock. */
  clock?: Clock;
  log?: Logger;
}

export interface EtcdStoreStats {
  /** Watches currently open. */
  watchers: number;
  /** Times a watch stream broke and was re-established. */
  watchReconnects: number;
  /** The etcd version the store found at open ('' when it could not tell). */
  serverVersion: string;
  /** Whether watches send WatchProgressRequests. */
  progressRequests: boolean;
}

export async function openEtcdStore(opts: EtcdStoreOptions): Promise<EtcdStore> {
  return EtcdStore.open(opts);
}

/** The one key every cheap "what is the revision" read looks at: a single byte no one writes. */
const PROBE_KEY = Buffer.from([0]);

export class EtcdStore implements Store {
  private readonly cluster: EtcdCluster;
  private readonly clock: Clock;
  private readonly log?: Logger;
  private readonly healthTimeoutMs: number;
  private readonly compactIntervalMs: number;
  private readonly compactMinRetain: number;
  private readonly watchBufferSize: number;
  private readonly progressRequests: boolean;
  private readonly serverVersion: string;

  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing?: Promise<void>;
  private inflight = 0;
  private drained?: () => void;
  private readonly watches = new Set<EtcdWatch>();
  /** Settles when the last write submitted for each key has finished (see txn()). */
  private readonly keyTails = new Map<string, Promise<void>>();
  private knownCompactRevision = 0;
  private watchReconnects = 0;
  private compactTimer?: Timer;
  /** The revision seen at the previous compaction tick: the next tick compacts up to it. */
  private compactCandidate = 0;
  /** Leases shared by the writes of one TTL within a short window, as upstream's lease manager shares them. */
  private readonly leases = new Map<number, { id: Promise<string>; until: number }>();

  static async open(opts: EtcdStoreOptions): Promise<EtcdStore> {
    const requestTimeoutMs = positive(opts.requestTimeoutMs, 5_000);
    const cluster = new EtcdCluster({ endpoints: opts.endpoints, requestTimeoutMs, tls: opts.tls, randomizeEndpoints: opts.randomizeEndpoints });
    try {
      const dialTimeoutMs = positive(opts.dialTimeoutMs, 5_000);
      await cluster
        .call('connect', (ep, deadline) => ep.kv.range({ key: PROBE_KEY, count_only: true }, { deadline }), {
          idempotent: true,
          timeoutMs: dialTimeoutMs,
        })
        .catch((e: unknown) => {
          throw new StoreError('unavailable', `cannot use etcd at ${cluster.endpointUrls.join(', ')}: ${errorText(e)}`);
        });
      const version = await cluster
        .call('status', (ep, deadline) => ep.maintenance.status({ deadline }), { idempotent: true, timeoutMs: dialTimeoutMs })
        .then((s) => s.version)
        .catch(() => '');
      return new EtcdStore(opts, cluster, version);
    } catch (e) {
      cluster.close();
      throw e;
    }
  }

  private constructor(opts: EtcdStoreOptions, cluster: EtcdCluster, serverVersion: string) {
    this.cluster = cluster;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log;
    this.healthTimeoutMs = Math.min(positive(opts.healthTimeoutMs, 2_000), cluster.requestTimeoutMs);
    this.compactIntervalMs = Math.max(0, opts.compactIntervalMs ?? 5 * 60_000);
    this.compactMinRetain = Math.max(0, opts.compactMinRetain ?? 1000);
    this.watchBufferSize = positive(opts.watchBufferSize, 10_000);
    this.serverVersion = serverVersion;
    this.progressRequests = opts.progressRequests ?? progressRequestsAreOrdered(serverVersion);
    if (!this.progressRequests) {
      this.log?.info(
        { etcdVersion: serverVersion || 'unknown' },
        'etcd watch progress comes from periodic notifications only; run etcd with --experimental-watch-progress-notify-interval=1s',
      );
    }
    this.scheduleCompaction();
  }

  // ---- reads ----

  async currentRevision(): Promise<number> {
    const res = await this.read('read the current revision', { key: PROBE_KEY, count_only: true });
    const revision = Number(res.header.revision);
    // The caller may now wait for a watch to reach this revision: ask lagging ones to say so.
    if (this.progressRequests) for (const w of this.watches) w.requestProgress(revision);
    return revision;
  }

  async compactRevision(): Promise<number> {
    const known = this.knownCompactRevision;
    try {
      // A read at the known compact revision succeeds exactly when no later compaction happened.
      await this.read('read the compact revision', { key: PROBE_KEY, count_only: true, revision: Math.max(known, 1) }, true);
      return known;
    } catch (e) {
      if (!isCompactedError(e)) throw this.mapError('read the compact revision', e);
    }
    return this.probeCompactRevision();
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const res = await this.read('get', { key: Buffer.from(key, 'utf8') });
    const kv = res.kvs[0];
    return kv ? toKeyValue(kv) : undefined;
  }

  async count(prefix: string): Promise<number> {
    const { key, rangeEnd } = prefixRange(prefix);
    const res = await this.read('count', { key, range_end: rangeEnd, count_only: true });
    return Number(res.count);
  }

  async list(opts: ListOptions): Promise<ListResult> {
    const limit = opts.limit && opts.limit > 0 ? Math.floor(opts.limit) : 0;
    const at = opts.revision && opts.revision > 0 ? Math.floor(opts.revision) : 0;
    const { key, rangeEnd } = prefixRange(opts.prefix, opts.after);
    const req: IRangeRequest = { key, range_end: rangeEnd };
    if (limit > 0) req.limit = limit;
    if (at > 0) req.revision = at;
    const res = await this.read('list', req, false, at);
    const items = res.kvs.map(toKeyValue);
    const revision = at > 0 ? at : Number(res.header.revision);
    if (!res.more) return { items, revision, more: false };
    return { items, revision, more: true, remaining: Math.max(0, Number(res.count) - items.length) };
  }

  // ---- writes ----

  async create(key: string, value: string, opts?: WriteOptions): Promise<KeyValue> {
    const k = Buffer.from(key, 'utf8');
    const res = await this.txn('create', key, async () => ({
      compare: [{ key: k, target: 'Version', result: 'Equal', version: 0 }],
      success: [{ request_put: { key: k, value: Buffer.from(value, 'utf8'), ...(await this.leaseFor(opts)) } }],
      failure: [],
    }));
    if (!res.succeeded) throw new StoreError('exists', `${key} already exists`);
    const revision = Number(res.header.revision);
    return { key, value, createRevision: revision, modRevision: revision };
  }

  async update(key: string, value: string, expectedModRevision: number, opts?: WriteOptions): Promise<KeyValue> {
    const k = Buffer.from(key, 'utf8');
    const res = await this.txn('update', key, async () => ({
      compare: [
        { key: k, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision },
        { key: k, target: 'Version', result: 'Greater', version: 0 },
      ],
      // A put without a lease detaches the key from any it had: a write without a TTL keeps it for good.
      success: [{ request_put: { key: k, value: Buffer.from(value, 'utf8'), prev_kv: true, ...(await this.leaseFor(opts)) } }],
      failure: [{ request_range: { key: k } }],
    }));
    if (!res.succeeded) throw this.writeFailure(key, res, expectedModRevision);
    const prev = res.responses[0]?.response_put?.prev_kv;
    const revision = Number(res.header.revision);
    return { key, value, createRevision: prev ? Number(prev.create_revision) : revision, modRevision: revision };
  }

  async delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    const k = Buffer.from(key, 'utf8');
    const compare: ITxnRequest['compare'] = [{ key: k, target: 'Version', result: 'Greater', version: 0 }];
    if (expectedModRevision !== undefined) compare.unshift({ key: k, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision });
    const res = await this.txn('delete', key, {
      compare,
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.succeeded) throw this.writeFailure(key, res, expectedModRevision);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs?.[0];
    if (!prev) throw new StoreError('not-found', `${key} not found`);
    return { ...toKeyValue(prev), modRevision: Number(res.header.revision) };
  }

  /**
   * The lease a write with a TTL is attached to. Writes of one TTL within a window share a lease
   * granted for the TTL plus that window (a minute, or 5 % of the TTL when shorter), so keys go
   * between their TTL and a little after it, never before, and a busy namespace's Events cost a
   * lease a minute rather than one each.
   */
  private async leaseFor(opts: WriteOptions | undefined): Promise<{ lease?: string }> {
    const ttl = opts?.ttlSeconds;
    if (ttl === undefined || ttl <= 0) return {};
    const seconds = Math.ceil(ttl);
    const reuseSeconds = Math.max(0, Math.min(60, Math.floor(seconds * 0.05)));
    const now = this.clock.now();
    let entry = this.leases.get(seconds);
    if (!entry || entry.until <= now) {
      // Runs within the write that needs it (see txn), so close() waits for it with the write.
      const grant = (async () => {
        try {
          const res = await this.cluster.call('lease grant', (ep, d) => ep.lease.leaseGrant({ TTL: seconds + reuseSeconds, ID: 0 }, { deadline: d }), {
            idempotent: true,
            deadline: Date.now() + this.cluster.requestTimeoutMs,
          });
          return res.ID;
        } catch (e) {
          throw this.mapError('lease grant', e);
        }
      })();
      entry = { id: grant, until: now + reuseSeconds * 1000 };
      this.leases.set(seconds, entry);
      // A failed grant is not shared: the next write asks again.
      grant.catch(() => {
        if (this.leases.get(seconds) === entry) this.leases.delete(seconds);
      });
    }
    return { lease: await entry.id };
  }

  private writeFailure(key: string, res: ITxnResponse, expected?: number): StoreError {
    const kv = res.responses[0]?.response_range?.kvs?.[0];
    if (!kv) return new StoreError('not-found', `${key} not found`);
    const current = toKeyValue(kv);
    return new StoreError('conflict', `${key} has been modified (at revision ${current.modRevision}, expected ${expected})`, current);
  }

  // ---- compaction ----

  async compact(revision: number): Promise<void> {
    if (revision <= 0) return;
    await this.operation(true, async () => {
      let target = Math.floor(revision);
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await this.cluster.call('compact', (ep, deadline) => ep.kv.compact({ revision: target, physical: false }, { deadline }), { idempotent: true });
          this.noteCompacted(target);
          return;
        } catch (e) {
          // Already compacted at or past it: nothing to do.
          if (isCompactedError(e)) return;
          // Past the current revision: compact everything there is, as SQLite does.
          if (isFutureRevisionError(e) && attempt === 0) {
            target = Math.min(target, await this.currentRevision());
            continue;
          }
          throw this.mapError('compact', e);
        }
      }
    });
  }

  /** What the periodic timer runs; returns the revision compacted to (0: nothing to do). */
  async maintenance(): Promise<number> {
    const current = await this.currentRevision();
    const target = Math.min(this.compactCandidate, current - this.compactMinRetain);
    this.compactCandidate = current;
    if (target <= 0 || target <= this.knownCompactRevision) return 0;
    await this.compact(target);
    return target;
  }

  private scheduleCompaction(): void {
    if (this.compactIntervalMs <= 0 || this.state !== 'open') return;
    this.compactTimer = this.clock.setTimeout(() => {
      this.maintenance()
        .then((rev) => {
          if (rev > 0) this.log?.info({ revision: rev }, 'compacted etcd history');
        })
        .catch((e: unknown) => this.log?.warn({ err: String(e) }, 'etcd compaction failed; retrying next period'))
        .finally(() => this.scheduleCompaction());
    }, this.compactIntervalMs);
  }

  private noteCompacted(revision: number): void {
    if (revision > this.knownCompactRevision) this.knownCompactRevision = revision;
  }

  /** Starts a watch below the known compact revision; etcd answers with the actual one. */
  private probeCompactRevision(): Promise<number> {
    const start = Math.max(this.knownCompactRevision, 1);
    return this.operation(false, () =>
      this.cluster
        .call('read the compact revision', (ep, deadline) => watchForCompactRevision(ep, start, deadline), { idempotent: true })
        .then(
          (revision) => {
            this.noteCompacted(revision);
            return this.knownCompactRevision;
          },
          (e: unknown) => {
            throw this.mapError('read the compact revision', e);
          },
        ),
    );
  }

  // ---- watch ----

  watch(prefix: string, afterRevision: number, signal: AbortSignal, onProgress?: (revision: number) => void): AsyncIterable<StoreEvent[]> {
    return this.watchEvents(prefix, afterRevision, signal, onProgress);
  }

  private async *watchEvents(
    prefix: string,
    afterRevision: number,
    signal: AbortSignal,
    onProgress?: (revision: number) => void,
  ): AsyncGenerator<StoreEvent[]> {
    if (this.state !== 'open') throw closedError();
    if (signal.aborted) return;
    let connectedOnce = false;
    const w = new EtcdWatch({
      cluster: this.cluster,
      prefix,
      afterRevision,
      bufferSize: this.watchBufferSize,
      progressRequests: () => this.progressRequests,
      onCompacted: (rev) => this.noteCompacted(rev),
      onState: (state, detail) => {
        if (state === 'connected') {
          if (connectedOnce) this.log?.info({ prefix }, 'etcd watch resumed');
          connectedOnce = true;
        } else {
          this.watchReconnects++;
          this.log?.warn({ prefix, reason: detail }, 'etcd watch stream lost; reconnecting');
        }
      },
    });
    this.watches.add(w);
    const stop = () => w.stop();
    signal.addEventListener('abort', stop);
    w.start();
    let lastProgress = 0;
    try {
      for (;;) {
        if (signal.aborted) return;
        const item = w.take();
        if (item) {
          if ('events' in item) {
            yield item.events;
          } else if (item.progress > lastProgress) {
            lastProgress = item.progress;
            try {
              onProgress?.(item.progress);
            } catch {
              // A failing progress callback is the consumer's problem, not the store's.
            }
          }
          continue;
        }
        if (w.error) throw w.error;
        if (signal.aborted) return;
        await w.idle();
      }
    } finally {
      w.stop();
      this.watches.delete(w);
      signal.removeEventListener('abort', stop);
    }
  }

  // ---- lifecycle ----

  async dbSize(): Promise<number> {
    const status = await this.operation(false, async () => {
      try {
        return await this.cluster.call('status', (ep, deadline) => ep.maintenance.status({ deadline }), { idempotent: true, timeoutMs: this.healthTimeoutMs });
      } catch (e) {
        throw this.mapError('status', e);
      }
    });
    return Number(status.dbSize);
  }

  async health(): Promise<{ ok: boolean; reason?: string }> {
    if (this.state !== 'open') return { ok: false, reason: 'store closed' };
    try {
      // A linearizable read needs the quorum; hasleader makes a cut-off member say so at once.
      await this.cluster.call('health check', (ep, deadline) => ep.kv.range({ key: PROBE_KEY, count_only: true }, { deadline }), {
        idempotent: true,
        timeoutMs: this.healthTimeoutMs,
        singleRound: true,
      });
      const alarms = await this.cluster
        .call('alarm check', (ep, deadline) => ep.maintenance.alarm({ action: 'Get' }, { deadline }), { idempotent: true, timeoutMs: this.healthTimeoutMs })
        .then((r) => r.alarms.filter((a) => String(a.alarm).toUpperCase() !== 'NONE'))
        .catch(() => []);
      if (alarms.length > 0) {
        return { ok: false, reason: `etcd: alarm ${alarms.map((a) => `${String(a.alarm).toUpperCase()} on member ${a.memberID}`).join(', ')}` };
      }
      return { ok: true };
    } catch (e) {
      if (e instanceof StoreError && e.code === 'closed') return { ok: false, reason: 'store closed' };
      const msg = errorText(e);
      return { ok: false, reason: msg.startsWith('etcd') ? msg : `etcd: ${msg}` };
    }
  }

  stats(): EtcdStoreStats {
    return { watchers: this.watches.size, watchReconnects: this.watchReconnects, serverVersion: this.serverVersion, progressRequests: this.progressRequests };
  }

  get endpoints(): string[] {
    return this.cluster.endpointUrls;
  }

  /** Waits for calls already accepted, ends watches with 'closed', and closes the connections. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.state = 'closing';
    this.compactTimer?.cancel();
    if (this.inflight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.state = 'closed';
    const err = closedError();
    for (const w of this.watches) w.fail(err);
    this.cluster.close();
  }

  // ---- helpers ----

  /** Counts a call as in flight (close waits for it); writes are refused once closing. */
  private async operation<T>(write: boolean, fn: () => Promise<T>): Promise<T> {
    if (this.state === 'closed' || (write && this.state !== 'open')) throw closedError();
    this.inflight++;
    try {
      return await fn();
    } finally {
      if (--this.inflight === 0) this.drained?.();
    }
  }

  /** A linearizable range; raw etcd errors are mapped unless raw is set. */
  private read(what: string, req: IRangeRequest, raw = false, atRevision = 0): Promise<IRangeResponse> {
    return this.operation(false, async () => {
      try {
        return await this.cluster.call(what, (ep, deadline) => ep.kv.range(req, { deadline }), { idempotent: true });
      } catch (e) {
        if (raw) throw e;
        if (isCompactedError(e)) {
          const compacted = await this.compactRevision();
          throw new StoreError('compacted', `revision ${atRevision} has been compacted (oldest is ${compacted})`, undefined, compacted);
        }
        if (isFutureRevisionError(e)) {
          throw new StoreError('unavailable', `revision ${atRevision} is newer than the current revision`);
        }
        throw this.mapError(what, e);
      }
    });
  }

  /**
   * One write transaction. Writes to the same key run one after the other in the order they were
   * submitted (etcd orders concurrent requests arbitrarily; SQLite's writer keeps submission
   * order, and callers may rely on it). The deadline runs from submission, queueing included.
   */
  private txn(what: string, key: string, request: ITxnRequest | (() => Promise<ITxnRequest>)): Promise<ITxnResponse> {
    return this.operation(true, () => {
      const deadline = Date.now() + this.cluster.requestTimeoutMs;
      const run = async () => {
        // Built inside the operation (a TTL's lease is granted here), so close() waits for it too.
        const req = typeof request === 'function' ? await request() : request;
        try {
          return await this.cluster.call(what, (ep, d) => ep.kv.txn(req, { deadline: d }), { idempotent: false, deadline });
        } catch (e) {
          throw this.mapError(what, e);
        }
      };
      const before = this.keyTails.get(key);
      const result = before ? before.then(run) : run();
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      this.keyTails.set(key, tail);
      void tail.then(() => {
        if (this.keyTails.get(key) === tail) this.keyTails.delete(key);
      });
      return result;
    });
  }

  private mapError(what: string, e: unknown): StoreError {
    if (e instanceof StoreError) return e;
    return new StoreError('unavailable', `etcd: ${what} failed: ${describeFailure(e, this.cluster.requestTimeoutMs)}`);
  }
}

/** Resolves with the compact revision etcd reports for a watch starting at `start`. */
function watchForCompactRevision(ep: EtcdEndpoint, start: number, deadline: Date): Promise<number> {
  return ep.openWatchStream().then(
    (stream) =>
      new Promise<number>((resolve, reject) => {
        const done = (fn: () => void) => {
          clearTimeout(timer);
          stream.removeAllListeners();
          stream.on('error', () => undefined);
          stream.cancel();
          fn();
        };
        const timer = setTimeout(
          () => done(() => reject(rpcError({ code: 4, details: 'deadline exceeded waiting for the compact revision', message: '' }, ep.url))),
          Math.max(1, deadline.getTime() - Date.now()),
        );
        stream.on('data', (res) => {
          const revision = Number(res.compact_revision ?? 0);
          if (revision > 0) done(() => resolve(revision));
          // Not compacted after all (a race with our read): the start is still available.
          else if (Number(res.header?.revision ?? 0) > 0 && !res.created && !res.canceled) done(() => resolve(start - 1));
          else if (res.canceled) done(() => reject(rpcError({ code: 2, details: res.cancel_reason || 'watch canceled', message: '' }, ep.url)));
        });
        stream.on('error', (e) => done(() => reject(rpcError(e, ep.url))));
        stream.on('end', () => done(() => reject(rpcError({ code: 14, details: 'watch stream ended', message: '' }, ep.url))));
        stream.write({ create_request: { key: PROBE_KEY, start_revision: start } });
      }),
    (e: unknown) => {
      throw rpcError(e, ep.url);
    },
  );
}

/**
 * Whether this etcd answers WatchProgressRequests in order with the stream's events
 * (etcd-io/etcd#15220 and follow-ups; the versions Kubernetes requires for consistent reads from
 * its watch cache).
 */
export function progressRequestsAreOrdered(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor === 4) return patch >= 31;
  if (minor === 5) return patch >= 13;
  return minor > 5;
}

function positive(n: number | undefined, fallback: number): number {
  return n !== undefined && n > 0 ? Math.floor(n) : fallback;
}

function closedError(): StoreError {
  return new StoreError('closed', 'store is closed');
}
