// The storage seam, in the spirit of kine's Backend: nothing above it knows which backend runs.
// One global, monotonic revision; it is every object's resourceVersion.

export interface KeyValue {
  key: string;
  /** The object as JSON text, exactly as the API server wrote it (without resourceVersion). */
  value: string;
  /** Revision at which this key was (last) created. */
  createRevision: number;
  /** Revision of the write that produced this value; the object's resourceVersion. */
  modRevision: number;
}

export type StoreEvent =
  | { type: 'create'; kv: KeyValue }
  | { type: 'update'; kv: KeyValue; prev: KeyValue }
  /** kv carries the last value and, as modRevision, the revision of the delete itself. */
  | { type: 'delete'; kv: KeyValue; prev: KeyValue };

export interface ListOptions {
  /** Keys that start with this prefix. */
  prefix: string;
  /** Only keys strictly greater than this one (for continue tokens). */
  after?: string;
  /** At most this many items; more=true tells there are others. 0 or undefined: no limit. */
  limit?: number;
  /** Read as of this revision (0/undefined: latest). Older than the compacted revision → compacted. */
  revision?: number;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at. */
  revision: number;
  more: boolean;
  /** When more=true and the backend counts cheaply: how many keys follow. */
  remaining?: number;
}

export type StoreErrorCode = 'exists' | 'conflict' | 'not-found' | 'compacted' | 'unavailable' | 'closed';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    /** For conflict: the current value, so callers can retry without another read. */
    readonly current?: KeyValue,
    /** For compacted: the oldest revision still available. */
    readonly compactRevision?: number,
    /**
     * For unavailable: the write reached the store and may or may not have been applied (the
     * member went away before answering), so sending it again is not safe.
     */
    readonly outcomeUnknown = false,
  ) {
    super(message);
  }
}

/** A write that reached the store and may or may not have been applied: not safe to send again. */
export function outcomeUnknownError(message: string): StoreError {
  return new StoreError('unavailable', message, undefined, undefined, true);
}

export function isStoreError(e: unknown, code?: StoreErrorCode): e is StoreError {
  return e instanceof StoreError && (code === undefined || e.code === code);
}

/** How a write is kept. */
export interface WriteOptions {
  /**
   * The key is deleted by the store this many seconds after this write (as a kine or etcd lease
   * does; a watch sees an ordinary delete), unless written again first. A write without it keeps
   * the key for good. Backends may delete a little later, never earlier.
   */
  ttlSeconds?: number;
}

export interface Store {
  /** The latest committed revision. */
  currentRevision(): Promise<number>;
  /** The oldest revision whose history is still kept (watches/lists before it fail as compacted). */
  compactRevision(): Promise<number>;
  get(key: string): Promise<KeyValue | undefined>;
  list(opts: ListOptions): Promise<ListResult>;
  count(prefix: string): Promise<number>;
  /** Fails with 'exists' if the key is present. */
  create(key: string, value: string, opts?: WriteOptions): Promise<KeyValue>;
  /** Compare-and-swap on modRevision. Fails with 'conflict' (carrying the current value) or 'not-found'. */
  update(key: string, value: string, expectedModRevision: number, opts?: WriteOptions): Promise<KeyValue>;
  /** Deletes when modRevision matches (or unconditionally when undefined). Returns the deleted value,
   * with modRevision set to the delete's own revision. */
  delete(key: string, expectedModRevision?: number): Promise<KeyValue>;
  /**
   * Events for keys under prefix with revision > afterRevision, in revision order, batched by
   * commit. Fails with 'compacted' when afterRevision+1 is no longer in history. Ends when signal aborts.
   * progress() callbacks (if any) receive revisions the watcher is known to be current at, for bookmarks.
   */
  watch(prefix: string, afterRevision: number, signal: AbortSignal, onProgress?: (revision: number) => void): AsyncIterable<StoreEvent[]>;
  /** Drops history at or before revision (the latest value of each live key is always kept). */
  compact(revision: number): Promise<void>;
  /** Bytes the backend's data takes on disk (kine's DbSize; etcd's db size): apiserver_storage_size_bytes. */
  dbSize(): Promise<number>;
  /** Whether the backend is ready to serve; with a reason when not (for /readyz). */
  health(): Promise<{ ok: boolean; reason?: string }>;
  close(): Promise<void>;
}
