// Prometheus metrics for /metrics, named as upstream's apiserver metrics where one exists.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Requests by verb, group, resource and HTTP code.',
    labelNames: ['verb', 'group', 'resource', 'subresource', 'code'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Request latency (watches excluded).',
    labelNames: ['verb', 'resource'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly watchers = new Gauge({
    name: 'apiserver_registered_watchers',
    help: 'Open watches by resource.',
    labelNames: ['group', 'resource'] as const,
    registers: [this.registry],
  });
  readonly cacheObjects = new Gauge({
    name: 'apiserver_watch_cache_objects',
    help: 'Objects held by the watch cache by resource.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
