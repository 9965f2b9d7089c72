// The etcd connection layer under EtcdStore: one etcd3 client per endpoint, bounded calls, and
// failover that never repeats a write whose outcome is unknown.
//
// Why not the etcd3 client's own fault handling: its default global policy retries any
// "recoverable" error three times, writes included, so a transaction whose answer was lost could
// commit twice (a create would then report 'exists' for its own write), and its circuit breaker
// and channel resets disturb healthy watch streams on the same host. Here etcd3's policies are
// no-ops and this file decides:
//
//  - Every call has one deadline (requestTimeoutMs). Nothing waits longer, whatever etcd does.
//  - Errors that prove the request was not executed (no connection, "no leader" from the
//    hasleader check, too many requests, proposal dropped) move on to the next endpoint and try
//    again, with a short backoff once every endpoint has failed, until the deadline.
//  - Errors that leave the outcome open (connection lost mid-call, deadline, "request timed
//    out") are retried for reads only; a write fails with 'unavailable' and may or may not have
//    been applied, exactly what etcd itself reports. An acknowledged write is always committed.
//  - Every request carries the `hasleader: true` metadata (clientv3's WithRequireLeader): a
//    member cut off from its quorum answers "no leader" at once instead of timing out, and
//    cancels watch streams when it loses its leader, so watches move to a healthy member.
//
// The gRPC channels reconnect on their own with a backoff capped at one second, and keepalive
// pings notice a frozen member under an open watch stream.

import { errorText } from '../util/error-text.js';
import {
  castGrpcError,
  Etcd3,
  KVClient,
  LeaseClient,
  MaintenanceClient,
  type ICallable,
  type IOptions,
  type IWatchRequest,
  type IWatchResponse,
} from 'etcd3';
import { StoreError, outcomeUnknownError } from './store.js';

export interface EtcdTlsOptions {
  /** PEM CA bundle that signed the etcd server certificates. */
  ca: Buffer;
  /** PEM client certificate and key, when etcd requires client certificates. */
  cert?: Buffer;
  key?: Buffer;
}

export interface EtcdClientOptions {
  /** Client URLs (http://host:port or https://host:port); a bare host:port means http. */
  endpoints: string[];
  /** Deadline of each call, retries included. */
  requestTimeoutMs: number;
  tls?: EtcdTlsOptions;
  /** Start with a random member (default), spreading servers over the cluster; false: the first. */
  randomizeEndpoints?: boolean;
}

/** A gRPC failure as etcd answered it, kept raw so the layer above can tell cases apart. */
export class EtcdRpcError extends Error {
  constructor(
    /** gRPC status code, when the failure came from gRPC. */
    readonly code: number | undefined,
    readonly details: string,
    readonly endpoint: string,
  ) {
    super(details);
  }
}

/** What a failed call tells about its request. */
export type FailureKind = 'not-executed' | 'unknown-outcome' | 'final';

const GRPC_CANCELLED = 1;
const GRPC_UNKNOWN = 2;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_INTERNAL = 13;
const GRPC_UNAVAILABLE = 14;

/** Messages that prove etcd never started executing the request. */
const NOT_EXECUTED =
  /no leader|not leader|No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|failed to connect|Name resolution failed|not capable|too many requests|raft proposal dropped|Channel has been shut down/i;

export function classifyFailure(e: unknown): FailureKind {
  if (!(e instanceof EtcdRpcError)) return 'final';
  if (e.code === GRPC_UNAVAILABLE) return NOT_EXECUTED.test(e.details) ? 'not-executed' : 'unknown-outcome';
  if (e.code === GRPC_RESOURCE_EXHAUSTED && /too many requests/i.test(e.details)) return 'not-executed';
  if (e.code === GRPC_DEADLINE_EXCEEDED || e.code === GRPC_CANCELLED || e.code === GRPC_UNKNOWN || e.code === GRPC_INTERNAL) {
    return NOT_EXECUTED.test(e.details) ? 'not-executed' : 'unknown-outcome';
  }
  return 'final';
}

export function isCompactedError(e: unknown): boolean {
  return e instanceof EtcdRpcError && /required revision has been compacted/.test(e.details);
}

export function isFutureRevisionError(e: unknown): boolean {
  return e instanceof EtcdRpcError && /required revision is a future revision/.test(e.details);
}

/** A short, operator-facing account of a failure, without the endpoint. */
export function failureReason(e: unknown, timeoutMs?: number): string {
  if (!(e instanceof EtcdRpcError)) return errorText(e);
  const d = e.details
    .replace(/^\d+ [A-Z_]+: /, '')
    .replace(/\s*Resolution note:.*$/s, '')
    .replace(/^No connection established\. Last error: (Error: )?/, '');
  if (/no leader/i.test(d)) return 'the member has no leader, the cluster has likely lost quorum';
  if (/ECONNREFUSED/.test(d)) return 'connection refused';
  if (/failed to connect|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|connect /i.test(d)) return `cannot connect: ${d}`;
  if (e.code === GRPC_DEADLINE_EXCEEDED) return `no answer within ${timeoutMs ?? '?'} ms`;
  if (/request timed out/i.test(d)) return `${d.replace(/^etcdserver: /, '')} (quorum lost or cluster overloaded?)`;
  if (/database space exceeded/i.test(d)) return 'out of space (NOSPACE alarm: compact and defragment etcd)';
  if (/request is too large|larger than max/i.test(d)) return `request too large for etcd (see its --max-request-bytes): ${d}`;
  return d;
}

/** A failure with the member it came from, e.g. "connection refused (http://10.0.0.1:2379)". */
export function describeFailure(e: unknown, timeoutMs?: number): string {
  const reason = failureReason(e, timeoutMs);
  return e instanceof EtcdRpcError ? `${reason} (${e.endpoint})` : reason;
}

/** Every member's latest failure, most telling first, members with the same reason together. */
function summarizeFailures(failures: Map<string, string>): string {
  const byReason = new Map<string, string[]>();
  for (const [endpoint, reason] of failures) byReason.set(reason, [...(byReason.get(reason) ?? []), endpoint]);
  const rank = (r: string) => (/no leader/.test(r) ? 0 : /timed out|no answer/.test(r) ? 1 : /refused|cannot connect/.test(r) ? 3 : 2);
  return [...byReason]
    .sort((a, b) => rank(a[0]) - rank(b[0]))
    .map(([reason, endpoints]) => `${reason} (${endpoints.join(', ')})`)
    .join('; ');
}

/** One etcd member's client: an etcd3 instance with no fault policies of its own. */
export class EtcdEndpoint {
  readonly client: Etcd3;
  readonly kv: KVClient;
  readonly maintenance: MaintenanceClient;
  readonly lease: LeaseClient;
  readonly callable: ICallable<unknown>;

  constructor(
    readonly url: string,
    tls: EtcdTlsOptions | undefined,
  ) {
    const noop = { execute: <T>(fn: () => T) => fn() } as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
    const options: IOptions = {
      hosts: [url],
      faultHandling: { host: () => noop, global: noop },
      grpcOptions: {
        // Lists and watch responses may be large; etcd bounds requests itself (1.5 MiB by default).
        'grpc.max_receive_message_length': -1,
        // Notice a frozen member under an idle stream (etcd allows pings every 5 s by default).
        'grpc.keepalive_time_ms': 10_000,
        'grpc.keepalive_timeout_ms': 5_000,
        // Reconnect within a second once etcd is back (gRPC's default backoff grows to 2 minutes).
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 1_000,
      },
    };
    if (tls) options.credentials = { rootCertificate: tls.ca, privateKey: tls.key, certChain: tls.cert };
    this.client = new Etcd3(options);
    // The connection pool is internal to etcd3 (1.1.2); it is what its own RPC clients call through.
    const pool = (this.client as unknown as { pool?: ICallable<unknown> }).pool;
    if (!pool || typeof pool.withConnection !== 'function') {
      throw new Error('etcd3 client internals changed: no connection pool (skiff expects etcd3 1.1.x)');
    }
    this.callable = new RequireLeaderCallable(pool, url);
    this.kv = new KVClient(this.callable);
    this.maintenance = new MaintenanceClient(this.callable);
    this.lease = new LeaseClient(this.callable);
  }

  /** Opens a raw Watch stream on this member. */
  openWatchStream(): Promise<WatchStream> {
    return this.callable.withConnection('Watch', ({ client, metadata }) => {
      const watch = (client as unknown as { watch(md: unknown, opts: object): WatchStream }).watch;
      return watch.call(client, metadata, {});
    });
  }

  close(): void {
    this.client.close();
  }
}

/** Calls through etcd3's pool, adding `hasleader: true` and keeping gRPC errors raw. */
class RequireLeaderCallable implements ICallable<unknown> {
  readonly callOptionsFactory = undefined;

  constructor(
    private readonly pool: ICallable<unknown>,
    private readonly url: string,
  ) {}

  exec<T>(service: Service, method: string, params: unknown, options?: object): Promise<T> {
    return this.withConnection(service, ({ client, metadata }) => {
      return new Promise<T>((resolve, reject) => {
        const fn = (client as unknown as Record<string, (p: unknown, md: unknown, o: object, cb: (err: RawGrpcError | null, res: T) => void) => void>)[method];
        if (typeof fn !== 'function') {
          reject(new EtcdRpcError(undefined, `etcd3 client has no method ${service}.${method}`, this.url));
          return;
        }
        fn.call(client, params, metadata, options ?? {}, (err, res) => (err ? reject(rpcError(err, this.url)) : resolve(res)));
      });
    });
  }

  withConnection<R>(service: Service, fn: (args: ConnectionArgs) => Promise<R> | R): Promise<R> {
    return this.pool.withConnection(service, (args) => {
      args.metadata.set('hasleader', 'true');
      return fn(args);
    });
  }

  markFailed(): void {
    // Channels recover on their own; resetting them would also cut healthy watch streams.
  }
}

type Service = Parameters<ICallable<unknown>['exec']>[0];
type ConnectionArgs = Parameters<Parameters<ICallable<unknown>['withConnection']>[1]>[0];

interface RawGrpcError extends Error {
  code?: number;
  details?: string;
}

export function rpcError(err: unknown, endpoint: string): EtcdRpcError {
  if (err instanceof EtcdRpcError) return err;
  const raw = err as RawGrpcError;
  if (raw && typeof raw.code === 'number') return new EtcdRpcError(raw.code, raw.details || raw.message, endpoint);
  const cast = err instanceof Error ? castGrpcError(err) : new Error(String(err));
  return new EtcdRpcError(undefined, cast.message, endpoint);
}

/** The subset of a grpc-js ClientDuplexStream that watches use. */
export interface WatchStream {
  write(req: IWatchRequest): boolean;
  cancel(): void;
  pause(): void;
  resume(): void;
  on(event: 'data', fn: (res: IWatchResponse) => void): this;
  on(event: 'error', fn: (err: RawGrpcError) => void): this;
  on(event: 'end' | 'close', fn: () => void): this;
  removeAllListeners(): this;
}

export interface CallOptions {
  /** Reads may be retried after an unknown outcome; writes may not. */
  idempotent: boolean;
  /** Overrides requestTimeoutMs for this call. */
  timeoutMs?: number;
  /** An absolute deadline (ms since the epoch), set when the call was queued before it ran. */
  deadline?: number;
  /** Ask each member at most once (health checks: report at once rather than wait for recovery). */
  singleRound?: boolean;
}

/** All endpoints of one cluster, with the failover and deadline rules above. */
export class EtcdCluster {
  readonly endpoints: EtcdEndpoint[];
  readonly requestTimeoutMs: number;
  private current: number;
  private closed = false;

  constructor(opts: EtcdClientOptions) {
    if (opts.endpoints.length === 0) throw new StoreError('unavailable', 'etcd: no endpoints configured');
    this.endpoints = opts.endpoints.map((url) => new EtcdEndpoint(normalizeEndpoint(url), opts.tls));
    this.requestTimeoutMs = opts.requestTimeoutMs;
    // Spread servers over members; failures move every caller of this process on together.
    this.current = opts.randomizeEndpoints === false ? 0 : Math.floor(Math.random() * this.endpoints.length);
  }

  get endpointUrls(): string[] {
    return this.endpoints.map((e) => e.url);
  }

  /** The member calls go to now. */
  preferred(): EtcdEndpoint {
    return this.endpoints[this.current]!;
  }

  /** Moves on from ep, unless another caller already did. */
  failedOver(ep: EtcdEndpoint): void {
    if (this.endpoints[this.current] === ep) this.current = (this.current + 1) % this.endpoints.length;
  }

  /**
   * Runs fn against the preferred member, failing over as the rules above allow, within one
   * deadline. Throws the raw EtcdRpcError for final failures (the caller maps them), and a
   * StoreError 'unavailable' when etcd cannot be reached in time or a write's outcome is unknown.
   */
  async call<T>(what: string, fn: (ep: EtcdEndpoint, deadline: Date) => Promise<T>, opts: CallOptions): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
    const deadline = opts.deadline ?? Date.now() + timeoutMs;
    if (deadline - Date.now() < 5) {
      throw new StoreError('unavailable', `etcd: ${what} timed out after ${timeoutMs} ms waiting for earlier writes to the same key`);
    }
    const n = this.endpoints.length;
    const failures = new Map<string, string>();
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new StoreError('closed', 'store is closed');
      const ep = this.preferred();
      // With several members a read gives a silent one part of the time, then asks another.
      const remaining = deadline - Date.now();
      const attemptMs = opts.idempotent && n > 1 ? Math.min(remaining, Math.max(1000, Math.floor(timeoutMs / 2))) : remaining;
      try {
        return await fn(ep, new Date(Date.now() + attemptMs));
      } catch (e) {
        const err = rpcError(e, ep.url);
        failures.delete(ep.url);
        failures.set(ep.url, failureReason(err, attemptMs));
        const kind = classifyFailure(err);
        if (kind === 'final') throw err;
        // The next call asks another member, whatever this one did (a hung member never answers).
        this.failedOver(ep);
        if (kind === 'unknown-outcome' && !opts.idempotent) {
          throw outcomeUnknownError(`etcd: ${what} failed and may or may not have been applied: ${describeFailure(err, attemptMs)}`);
        }
        if (opts.singleRound && attempt + 1 >= n) break;
        const left = deadline - Date.now();
        // After a full round of failures, pause a little before asking the members again.
        const pause = (attempt + 1) % n === 0 ? Math.min(50 * 2 ** Math.min(Math.floor(attempt / n), 4), 500) : 0;
        if (left <= pause + 5) break;
        if (pause > 0) await sleep(pause);
      }
    }
    const elapsed = Date.now() - (deadline - timeoutMs);
    throw new StoreError('unavailable', `etcd: ${what} failed after ${elapsed} ms: ${summarizeFailures(failures)}`);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ep of this.endpoints) ep.close();
  }
}

/** etcd3 wants host:port or a URL; a bare host:port means plain http. */
function normalizeEndpoint(url: string): string {
  const trimmed = url.trim().replace(/\/+$/, '');
  return /^https?:\/\//.test(trimmed) ? trimmed : `http://${trimmed}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
