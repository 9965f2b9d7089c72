// Client-side Prometheus metrics under upstream's names (client-go's, as component-base exposes
// them), so a dashboard or alert written for kube-controller-manager or a kubelet reads skiff's
// unchanged: the REST client's requests, work queues, and leader election.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A registry's exposition text, its metrics in name order as Prometheus' Go client writes them. */
export async function metricsText(registry: Registry): Promise<string> {
  const names = registry.getMetricsAsArray().map((m) => m.name).sort();
  const parts = await Promise.all(names.map((n) => registry.getSingleMetricAsString(n)));
  return `${parts.join('\n\n')}\n`;
}

/** What a work queue reports (client-go's workqueue MetricsProvider, by queue name). */
export interface QueueMetrics {
  added(): void;
  /** A key left the queue for a worker after waiting this long. */
  started(waitedMs: number): void;
  /** A worker finished a key after this long. */
  finished(workedMs: number): void;
  retried(): void;
}

/** What the metrics read off a queue at scrape time. */
export interface QueueState {
  readonly length: number;
  /** When each key being worked on was picked up (ms since epoch, the queue's clock). */
  inFlightSince(): number[];
  now(): number;
}

// Upstream's buckets: ExponentialBuckets(10e-9, 10, 10) for work queues; the REST client's latency buckets.
const QUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export class ClientMetrics {
  private readonly queues = new Map<string, QueueState>();
  private readonly requests: Counter<'code' | 'method' | 'host'>;
  private readonly requestDuration: Histogram<'verb' | 'host'>;
  private readonly leader: Gauge<'name'>;
  private readonly adds: Counter<'name'>;
  private readonly retries: Counter<'name'>;
  private readonly queueDuration: Histogram<'name'>;
  private readonly workDuration: Histogram<'name'>;

  /** The registry these go to, which the controllers' own metrics join. */
  readonly registry: Registry;

  constructor(registry: Registry) {
    this.registry = registry;
    const registers = [registry];
    const queues = this.queues;
    this.requests = new Counter({ name: 'rest_client_requests_total', help: 'API requests this client sent, by response code (<error>: no answer), HTTP method and server.', labelNames: ['code', 'method', 'host'], registers });
    this.requestDuration = new Histogram({ name: 'rest_client_request_duration_seconds', help: 'Seconds from sending an API request to its answer, by HTTP method and server.', labelNames: ['verb', 'host'], buckets: REST_BUCKETS, registers });
    this.leader = new Gauge({ name: 'leader_election_master_status', help: '1 while this process holds the named leader-election lease, 0 while it waits as a backup.', labelNames: ['name'], registers });
    this.adds = new Counter({ name: 'workqueue_adds_total', help: 'Keys added to the work queue.', labelNames: ['name'], registers });
    this.retries = new Counter({ name: 'workqueue_retries_total', help: 'Keys put back on the work queue after a failed attempt.', labelNames: ['name'], registers });
    this.queueDuration = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'Seconds a key waited in the work queue before a worker took it.', labelNames: ['name'], buckets: QUEUE_BUCKETS, registers });
    this.workDuration = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'Seconds a worker spent on one key.', labelNames: ['name'], buckets: QUEUE_BUCKETS, registers });
    // Read off the queues when scraped.
    new Gauge({
      name: 'workqueue_depth',
      help: 'Keys waiting in the work queue now.',
      labelNames: ['name'],
      registers,
      collect() {
        for (const [name, q] of queues) this.set({ name }, q.length);
      },
    });
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'Seconds spent so far on the keys being worked on now (not yet in work_duration); a value that keeps growing means a stuck worker.',
      labelNames: ['name'],
      registers,
      collect() {
        for (const [name, q] of queues) this.set({ name }, q.inFlightSince().reduce((sum, t) => sum + (q.now() - t) / 1000, 0));
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'Seconds the longest-running worker of the queue has spent on its current key.',
      labelNames: ['name'],
      registers,
      collect() {
        for (const [name, q] of queues) this.set({ name }, Math.max(0, ...q.inFlightSince().map((t) => (q.now() - t) / 1000)));
      },
    });
  }

  /** One request's outcome: the status code, or none when no answer came. */
  request(method: string, url: URL, code: number | undefined, seconds: number): void {
    const host = url.host || 'none';
    this.requests.inc({ code: code === undefined ? '<error>' : String(code), method, host });
    this.requestDuration.observe({ verb: method, host }, seconds);
  }

  /** The metrics of the work queue named `name` (one per controller). */
  queue(name: string, state: QueueState): QueueMetrics {
    this.queues.set(name, state);
    const labels = { name };
    return {
      added: () => this.adds.inc(labels),
      started: (waitedMs) => this.queueDuration.observe(labels, waitedMs / 1000),
      finished: (workedMs) => this.workDuration.observe(labels, workedMs / 1000),
      retried: () => this.retries.inc(labels),
    };
  }

  leading(lease: string, leading: boolean): void {
    this.leader.set({ name: lease }, leading ? 1 : 0);
  }
}
