// One Store watch on etcd: its own gRPC Watch stream (one watcher per stream, as Kubernetes
// does, so etcd's per-stream progress logic concerns this watcher alone), reconnected and resumed
// by itself.
//
// Position: every event at or below `position` has been queued for the consumer. Events come
// from etcd in revision order, a revision never split across responses (fragmenting is off), so
// after a stream breaks the watch is re-created at position+1 on the next member: no gap, no
// duplicate. If that revision has been compacted meanwhile, the watch ends with 'compacted'.
//
// Progress: a response without events (a progress notification) says the watcher has been sent
// everything up to header.revision. etcd sends them to idle, synced watchers every
// --experimental-watch-progress-notify-interval (10 minutes by default: run etcd with 1s or
// less). Progress is queued behind the events before it and reported only when the consumer has
// taken those, so onProgress(r) never runs ahead of the events the consumer has seen.
// On request (requestProgress), a WatchProgressRequest asks for one at once; only on etcd
// versions where that answer is ordered with the stream's events (see etcd-io/etcd#15220, fixed
// in 3.4.24/3.5.8; skiff requires the releases Kubernetes requires for consistent reads from its
// watch cache, 3.4.31/3.5.13). On older etcd (Debian's 3.4.23) the answer may overtake events
// still buffered on the server, so it is never asked for and progress relies on the periodic
// notifications alone.

import { errorText } from '../util/error-text.js';
import type { IEvent, IKeyValue, IWatchResponse } from 'etcd3';
import { describeFailure, rpcError, type EtcdCluster, type EtcdEndpoint, type WatchStream } from './etcd-client.js';
import { StoreError, type KeyValue, type StoreEvent } from './store.js';

export interface EtcdWatchOptions {
  cluster: EtcdCluster;
  prefix: string;
  /** Start strictly after this revision. */
  afterRevision: number;
  /** Events queued unconsumed before the stream is paused (gRPC flow control then holds etcd back). */
  bufferSize: number;
  /** Whether WatchProgressRequest answers can be trusted (see above). */
  progressRequests: () => boolean;
  /** Told every compact revision learned from etcd. */
  onCompacted: (revision: number) => void;
  /** Told when the stream fails and when it is back, for logs. */
  onState?: (state: 'connected' | 'disconnected', detail?: string) => void;
}

type Item = { events: StoreEvent[] } | { progress: number };

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2_000;
/** A progress request without answer is asked again after this long. */
const PROGRESS_REQUEST_RETRY_MS = 1_000;

export class EtcdWatch {
  /** Everything at or below this revision has been queued for the consumer. */
  position: number;
  error?: StoreError;
  private readonly queue: Item[] = [];
  private queueHead = 0;
  private queuedEvents = 0;
  private stream?: WatchStream;
  private created = false;
  private paused = false;
  private stopped = false;
  private endSession?: (why?: string) => void;
  private wakeConsumer?: () => void;
  private wakeRunner?: () => void;
  private progressAskedAt = 0;
  private readonly key: Buffer;
  private readonly rangeEnd: Buffer;

  constructor(private readonly opts: EtcdWatchOptions) {
    this.position = Math.max(0, opts.afterRevision);
    const range = prefixRange(opts.prefix);
    this.key = range.key;
    this.rangeEnd = range.rangeEnd;
  }

  start(): void {
    void this.run();
  }

  /** The next queued item, if any. */
  take(): Item | undefined {
    if (this.queueHead >= this.queue.length) return undefined;
    const item = this.queue[this.queueHead]!;
    this.queue[this.queueHead++] = undefined as unknown as Item;
    if (this.queueHead === this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    } else if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
    if ('events' in item) {
      this.queuedEvents -= item.events.length;
      if (this.paused && this.queuedEvents <= this.opts.bufferSize / 2) {
        this.paused = false;
        this.stream?.resume();
      }
    }
    return item;
  }

  idle(): Promise<void> {
    if (this.queueHead < this.queue.length || this.error || this.stopped) return Promise.resolve();
    return new Promise((resolve) => (this.wakeConsumer = resolve));
  }

  /** The consumer waits for revision: ask etcd to confirm progress now, where that is safe. */
  requestProgress(revision: number): void {
    if (!this.stream || !this.created || this.position >= revision || !this.opts.progressRequests()) return;
    const now = Date.now();
    if (now - this.progressAskedAt < PROGRESS_REQUEST_RETRY_MS) return;
    this.progressAskedAt = now;
    this.stream.write({ progress_request: {} });
  }

  fail(e: StoreError): void {
    this.error ??= e;
    this.stop();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.endSession?.();
    this.wakeRunner?.();
    this.notify();
  }

  private notify(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = undefined;
    wake?.();
  }

  private async run(): Promise<void> {
    let backoff = MIN_BACKOFF_MS;
    while (!this.stopped) {
      const ep = this.opts.cluster.preferred();
      const { delivered, failure } = await this.session(ep);
      if (this.stopped) return;
      this.opts.onState?.('disconnected', failure);
      if (delivered) backoff = MIN_BACKOFF_MS;
      this.opts.cluster.failedOver(ep);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, backoff);
        this.wakeRunner = () => (clearTimeout(t), resolve());
      });
      this.wakeRunner = undefined;
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  /** One stream's life: resolves when it has failed, ended or been stopped. */
  private async session(ep: EtcdEndpoint): Promise<{ delivered: boolean; failure?: string }> {
    let stream: WatchStream;
    try {
      stream = await ep.openWatchStream();
    } catch (e) {
      return { delivered: false, failure: describeFailure(rpcError(e, ep.url)) };
    }
    return new Promise((resolve) => {
      let delivered = false;
      let done = false;
      const finish = (failure?: string) => {
        if (done) return;
        done = true;
        this.endSession = undefined;
        this.stream = undefined;
        this.created = false;
        this.paused = false;
        stream.removeAllListeners();
        stream.on('error', () => undefined);
        stream.cancel();
        resolve({ delivered, failure });
      };
      if (this.stopped) {
        finish();
        return;
      }
      this.endSession = finish;
      this.stream = stream;
      stream.on('data', (res: IWatchResponse) => {
        try {
          if (this.onResponse(res, finish)) delivered = true;
        } catch (e) {
          // A response we cannot make sense of: start over from the last good position.
          finish(`bad watch response: ${errorText(e)}`);
        }
      });
      stream.on('error', (e) => finish(describeFailure(rpcError(e, ep.url))));
      stream.on('end', () => finish(`watch stream ended by ${ep.url}`));
      stream.write({
        create_request: {
          key: this.key,
          range_end: this.rangeEnd,
          start_revision: this.position + 1,
          prev_kv: true,
          progress_notify: true,
        },
      });
    });
  }

  /** Returns true when the response moved the watch forward. */
  private onResponse(res: IWatchResponse, finish: (why?: string) => void): boolean {
    const compactRevision = Number(res.compact_revision ?? 0);
    if (compactRevision > 0) {
      this.opts.onCompacted(compactRevision);
      this.fail(
        new StoreError(
          'compacted',
          `revision ${this.position + 1} has been compacted (oldest is ${compactRevision})`,
          undefined,
          compactRevision,
        ),
      );
      return false;
    }
    if (res.canceled) {
      finish(`etcd canceled the watch: ${res.cancel_reason || 'no reason given'}`);
      return false;
    }
    if (res.created) {
      this.created = true;
      this.opts.onState?.('connected');
      return false;
    }
    const events = res.events ?? [];
    if (events.length > 0) {
      const batch = events.map(toStoreEvent);
      const last = batch[batch.length - 1]!.kv.modRevision;
      if (last <= this.position) return false; // cannot happen with a fresh start revision; be safe
      this.position = last;
      this.queue.push({ events: batch });
      this.queuedEvents += batch.length;
      if (!this.paused && this.queuedEvents > this.opts.bufferSize && this.stream) {
        this.paused = true;
        this.stream.pause();
      }
      this.notify();
      return true;
    }
    // A progress notification: everything up to header.revision has been sent.
    this.progressAskedAt = 0;
    const revision = Number(res.header?.revision ?? 0);
    if (!(revision > this.position)) return false;
    this.position = revision;
    const tail = this.queue.length > this.queueHead ? this.queue[this.queue.length - 1] : undefined;
    if (tail && 'progress' in tail) tail.progress = revision;
    else this.queue.push({ progress: revision });
    this.notify();
    return true;
  }
}

// ---- conversions ----

export function toKeyValue(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString('utf8'),
    value: kv.value.toString('utf8'),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
  };
}

export function toStoreEvent(ev: IEvent): StoreEvent {
  const kv = toKeyValue(ev.kv);
  const prev = ev.prev_kv ? toKeyValue(ev.prev_kv) : undefined;
  if (String(ev.type).toUpperCase() === 'DELETE') {
    // etcd's delete event carries only the key and the delete's revision; the value is prev's.
    const last = prev ?? { key: kv.key, value: '', createRevision: 0, modRevision: 0 };
    return { type: 'delete', kv: { ...last, modRevision: kv.modRevision }, prev: last };
  }
  if (kv.createRevision === kv.modRevision) return { type: 'create', kv };
  // prev_kv is missing only when etcd could not read it (compacted right below this event).
  return { type: 'update', kv, prev: prev ?? { key: kv.key, value: '', createRevision: kv.createRevision, modRevision: 0 } };
}

/** etcd's [key, range_end) for all keys starting with prefix; '' means every key. */
export function prefixRange(prefix: string, after?: string): { key: Buffer; rangeEnd: Buffer } {
  const p = Buffer.from(prefix, 'utf8');
  const rangeEnd = prefixEnd(p);
  let key = p.length === 0 ? Buffer.from([0]) : p;
  if (after !== undefined) {
    const a = Buffer.from(after, 'utf8');
    // The smallest key strictly greater than `after` is after + 0x00.
    if (Buffer.compare(a, p) >= 0) key = Buffer.concat([a, Buffer.from([0])]);
  }
  return { key, rangeEnd };
}

/** The first key after every key that starts with p; [0] ("to the end") when there is none. */
function prefixEnd(p: Buffer): Buffer {
  const end = Buffer.from(p);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
