// The API server's Prometheus metrics under kube-apiserver's names and labels, so dashboards and
// alerts written for it (request rates and latencies by verb and resource, in-flight requests,
// stored objects, storage latency) read skiff's unchanged. The controllers in the same process
// report their work queues and leader election into the same registry (ClientMetrics).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { IncomingMessage } from 'node:http';
import { ClientMetrics } from '../client/metrics.js';
import type { Store } from '../store/store.js';
import type { RequestInfo } from './http/request-info.js';
import type { AdmissionWebhookMetrics, WebhookType } from './admission/admission-review.js';

// Upstream's request latency buckets (also its etcd request buckets).
const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** Subresources that hold a connection open rather than answer once (CONNECT in upstream's verbs). */
export const CONNECT_SUBRESOURCES = new Set(['log', 'exec', 'portforward', 'attach', 'proxy']);

/** Non-resource paths counted in apiserver_request_total (a fixed set, so no path adds a series). */
const COUNTED_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/metrics']);

/** Whether a resource (and subresource) is one the server serves. */
export type ServedCheck = (group: string, version: string, resource: string, subresource: string | undefined) => boolean;

type RequestLabels = Record<'verb' | 'dry_run' | 'group' | 'version' | 'resource' | 'subresource' | 'scope' | 'component', string>;

/**
 * A request's labels as upstream reports them: the verb from the HTTP method (LIST for a
 * collection GET, WATCH, APPLY for server-side apply, CONNECT for streaming subresources), and
 * the scope `resource` for one object or any create, else `namespace` or `cluster`.
 */
export function requestLabels(info: RequestInfo, method: string, contentType: string | undefined, query: URLSearchParams, served: ServedCheck = () => true): RequestLabels | undefined {
  if (info.kind !== 'resource') {
    const path = info.path.replace(/\/+$/, '') || '/';
    if (!COUNTED_PATHS.has(path)) return undefined;
    return { verb: method === 'HEAD' ? 'GET' : method, dry_run: '', group: '', version: '', resource: '', subresource: path, scope: '', component: '' };
  }
  // Paths nothing serves add no series: a client could otherwise grow the metrics without bound.
  if (!served(info.group, info.version, info.resource, info.subresource)) return undefined;
  let verb: string;
  if (info.subresource && CONNECT_SUBRESOURCES.has(info.subresource)) verb = 'CONNECT';
  else if (info.verb === 'watch') verb = 'WATCH';
  else if (method === 'GET' || method === 'HEAD') verb = info.name !== undefined ? 'GET' : 'LIST';
  else if (method === 'PATCH') verb = (contentType ?? '').toLowerCase().startsWith('application/apply-patch') ? 'APPLY' : 'PATCH';
  else if (method === 'POST' || method === 'PUT' || method === 'DELETE') verb = method;
  else verb = 'other';
  const scope = info.name !== undefined || info.verb === 'create' ? 'resource' : info.namespace !== undefined ? 'namespace' : 'cluster';
  const values = [...new Set(query.getAll('dryRun'))].sort();
  const dryRun = values.every((v) => v === 'All') ? values.join(',') : 'invalid';
  return { verb, dry_run: dryRun, group: info.group, version: info.version, resource: info.resource, subresource: info.subresource ?? '', scope, component: 'apiserver' };
}

/** Watches and streams are long-running: counted apart, not as in-flight requests. */
function isLongRunning(labels: RequestLabels | undefined): labels is RequestLabels {
  return labels?.verb === 'WATCH' || labels?.verb === 'CONNECT';
}

class InflightWatermark {
  private current = 0;
  private high = 0;
  enter(): void {
    this.current++;
    if (this.current > this.high) this.high = this.current;
  }
  leave(): void {
    this.current--;
  }
  /** The highest count since the last read (then starts again from the current count). */
  read(): number {
    const h = this.high;
    this.high = this.current;
    return h;
  }
}

// Upstream's admission webhook latency buckets.
const WEBHOOK_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25];

/** apiserver_admission_webhook_*: each webhook call's latency, refusals and fail-open calls, under upstream's names and labels. */
class AdmissionWebhookMetricSet implements AdmissionWebhookMetrics {
  private readonly duration: Histogram<'name' | 'type' | 'operation' | 'rejected'>;
  private readonly rejections: Counter<'name' | 'type' | 'operation' | 'error_type' | 'rejection_code'>;
  private readonly failOpen: Counter<'name' | 'type'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({ name: 'apiserver_admission_webhook_admission_duration_seconds', help: 'Admission webhook latency in seconds, by name, type (admit or validating), operation and whether it rejected.', labelNames: ['name', 'type', 'operation', 'rejected'], buckets: WEBHOOK_BUCKETS, registers });
    this.rejections = new Counter({ name: 'apiserver_admission_webhook_rejection_count', help: 'Admission webhook rejections, by name, type, operation, error type (calling_webhook_error, apiserver_internal_error, no_error) and the code returned.', labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'], registers });
    this.failOpen = new Counter({ name: 'apiserver_admission_webhook_fail_open_count', help: 'Admission webhook calls that failed and were let through (failurePolicy Ignore), by name and type.', labelNames: ['name', 'type'], registers });
  }

  observeWebhook(name: string, type: WebhookType, operation: string, rejected: boolean, seconds: number): void {
    this.duration.observe({ name, type, operation, rejected: String(rejected) }, seconds);
  }

  observeRejection(name: string, type: WebhookType, operation: string, errorType: string, code: number): void {
    this.rejections.inc({ name, type, operation, error_type: errorType, rejection_code: String(code) });
  }

  observeFailOpen(name: string, type: WebhookType): void {
    this.failOpen.inc({ name, type });
  }
}

export class ApiMetrics {
  readonly registry = new Registry();
  /** The admission webhooks' calls (the two webhook plugins report here). */
  readonly admissionWebhooks = new AdmissionWebhookMetricSet(this.registry);
  /** The controllers' work queues and leader election, and the REST client's requests. */
  readonly client = new ClientMetrics(this.registry);
  private readonly duration: Histogram<keyof RequestLabels>;
  private readonly longRunning: Gauge<Exclude<keyof RequestLabels, 'dry_run'>>;
  private readonly etcdDuration: Histogram<'operation' | 'type'>;
  private readonly inflight = { readOnly: new InflightWatermark(), mutating: new InflightWatermark() };
  /** apiserver_request_total between scrapes: prom-client hashes a label set per inc, too dear for every request. */
  private readonly counted = new Map<string, { labels: Record<keyof RequestLabels | 'code', string>; n: number }>();

  /** `objects()`: stored objects per resource (GroupResource: "pods", "deployments.apps"); `served`: which requests to count. */
  constructor(objects: () => Map<string, number>, private readonly served: ServedCheck = () => true, dbSize: () => Promise<number> = async () => 0) {
    const registers = [this.registry];
    const inflight = this.inflight;
    const labelNames = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;
    const counted = this.counted;
    new Counter({
      name: 'apiserver_request_total',
      help: 'Requests answered, by verb, dry run, group, version, resource, subresource, scope, component and HTTP code.',
      labelNames: [...labelNames, 'code'],
      registers,
      // Counted per request in a plain map (a key of joined values), handed to the counter when scraped.
      collect() {
        for (const c of counted.values()) {
          if (c.n === 0) continue;
          this.inc(c.labels, c.n);
          c.n = 0;
        }
      },
    });
    this.duration = new Histogram({ name: 'apiserver_request_duration_seconds', help: 'Seconds from a request to its answer (for a watch or stream: its whole life), by the same labels but code.', labelNames, buckets: LATENCY_BUCKETS, registers });
    this.longRunning = new Gauge({ name: 'apiserver_longrunning_requests', help: 'Watches and streams open now.', labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'], registers });
    this.etcdDuration = new Histogram({ name: 'etcd_request_duration_seconds', help: 'Seconds a storage request took, by operation and type (the group resource); the embedded store reports here too, as kine does.', labelNames: ['operation', 'type'], buckets: LATENCY_BUCKETS, registers });
    new Gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'The most requests being answered at once since the previous scrape, read-only and mutating apart (watches and streams excluded).',
      labelNames: ['request_kind'],
      registers,
      collect() {
        this.set({ request_kind: 'readOnly' }, inflight.readOnly.read());
        this.set({ request_kind: 'mutating' }, inflight.mutating.read());
      },
    });
    new Gauge({
      name: 'apiserver_storage_size_bytes',
      help: 'Bytes the datastore takes on disk (SQLite: database and write-ahead log; etcd: the member answering).',
      labelNames: ['storage_cluster_id'],
      registers,
      async collect() {
        const bytes = await dbSize().catch(() => undefined);
        if (bytes !== undefined) this.set({ storage_cluster_id: '' }, bytes);
      },
    });
    new Gauge({
      name: 'apiserver_storage_objects',
      help: 'Objects stored, by resource.',
      labelNames: ['resource'],
      registers,
      collect() {
        for (const [resource, n] of objects()) this.set({ resource }, n);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Call when a request arrives, and `done` once it has been answered: when its handler returns,
   * or for a long-running one (a watch goes on after its handler returned) when its response closes.
   */
  begin(info: RequestInfo, req: IncomingMessage, query: URLSearchParams): { longRunning: boolean; done(code: number): void } {
    const started = performance.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const labels = requestLabels(info, method, req.headers['content-type'], query, this.served);
    if (isLongRunning(labels)) {
      const { dry_run: _dryRun, ...longLabels } = labels;
      this.longRunning.inc(longLabels);
      return {
        longRunning: true,
        done: (code) => {
          this.longRunning.dec(longLabels);
          this.answered(labels, code, started);
        },
      };
    }
    const kind = method === 'GET' || method === 'HEAD' ? this.inflight.readOnly : this.inflight.mutating;
    kind.enter();
    return {
      longRunning: false,
      done: (code) => {
        kind.leave();
        if (labels) this.answered(labels, code, started);
      },
    };
  }

  private answered(labels: RequestLabels, code: number, started: number): void {
    const key = `${labels.verb}\0${labels.dry_run}\0${labels.group}\0${labels.version}\0${labels.resource}\0${labels.subresource}\0${labels.scope}\0${labels.component}\0${code}`;
    let c = this.counted.get(key);
    if (!c) this.counted.set(key, (c = { labels: { ...labels, code: String(code) }, n: 0 }));
    c.n++;
    this.duration.observe(labels, (performance.now() - started) / 1000);
  }

  /**
   * The store, with every get, list, count, create, update and delete timed into
   * etcd_request_duration_seconds; `typeOf` names the group resource of a key.
   */
  instrument(store: Store, typeOf: (key: string) => string): Store {
    const h = this.etcdDuration;
    const timed = <T>(operation: string, key: string, run: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      const done = () => h.observe({ operation, type: typeOf(key) }, (performance.now() - t) / 1000);
      const p = run();
      p.then(done, done);
      return p;
    };
    return {
      currentRevision: () => store.currentRevision(),
      compactRevision: () => store.compactRevision(),
      get: (key) => timed('get', key, () => store.get(key)),
      list: (opts) => timed('list', opts.prefix, () => store.list(opts)),
      count: (prefix) => timed('count', prefix, () => store.count(prefix)),
      create: (key, value, opts) => timed('create', key, () => store.create(key, value, opts)),
      update: (key, value, rev, opts) => timed('update', key, () => store.update(key, value, rev, opts)),
      delete: (key, rev) => timed('delete', key, () => store.delete(key, rev)),
      watch: (prefix, after, signal, onProgress) => store.watch(prefix, after, signal, onProgress),
      compact: (rev) => store.compact(rev),
      health: () => store.health(),
      dbSize: () => store.dbSize(),
      close: () => store.close(),
    };
  }
}
