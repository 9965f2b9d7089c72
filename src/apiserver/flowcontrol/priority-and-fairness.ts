// API Priority and Fairness, as kube-apiserver's: every request is classified by the FlowSchemas
// into a priority level; each limited level has its share of the server's concurrency
// (--max-requests-inflight + --max-mutating-requests-inflight, split by nominalConcurrencyShares)
// and fair queues for the rest; what cannot wait is answered 429 with Retry-After. So a flood from
// some users queues and is refused within its own level, while node heartbeats (node-high), the
// system's own components and leader election keep their seats.
//
// Left out, and why: seat borrowing between levels (lendablePercent/borrowingLimitPercent are kept
// and shown but each level uses its nominal seats only: a level never gets more than its share, so
// a flood is held tighter, not looser); the extra seats upstream charges a write for its watch
// fan-out. Lists are charged one seat per 100 objects they may return, up to 10, as upstream's
// work estimator does.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { FlowSchema, PriorityLevelConfiguration } from '../../api/kinds/flowcontrol.js';
import { tooManyRequests } from '../../api/errors.js';
import type { UserInfo } from '../../auth/user.js';
import type { Clock } from '../../util/clock.js';
import type { RequestInfo } from '../http/request-info.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS } from './bootstrap-config.js';
import { flowDistinguisher, flowSchemaMatches, orderFlowSchemas, requestNamespace } from './classifier.js';
import { QueueSet, type Rejection, type Release } from './queue-set.js';

export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

/** Where the configuration comes from: the server's watch caches. */
export interface FlowControlConfigSource {
  flowSchemas(): readonly FlowSchema[];
  priorityLevels(): readonly PriorityLevelConfiguration[];
  /** Changes whenever either list may have changed (the caches' revisions). */
  version(): string;
}

export interface PriorityAndFairnessOptions {
  clock: Clock;
  /** The seats all limited levels share: --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrencyLimit: number;
  source: FlowControlConfigSource;
  registry: Registry;
  /** The longest a request waits in a queue before a 429 (upstream: a quarter of the 60 s request timeout). */
  maxWaitMs?: number;
}

/** Where a request goes: its schema, its level and its flow. */
export interface Classification {
  flowSchema: FlowSchema;
  priorityLevel: PriorityLevelConfiguration;
  flowKey: string;
}

interface Level {
  config: PriorityLevelConfiguration;
  /** Undefined for an exempt level: never limited, never queued. */
  queues?: QueueSet;
  nominalSeats: number;
  retryAfter: RetryAfter;
  /** Exempt requests running: one counter per level name, kept when the configuration is rebuilt. */
  exempt: { executing: number };
}

const DEFAULT_MAX_WAIT_MS = 15_000;
const CATCH_ALL_SCHEMA = MANDATORY_FLOW_SCHEMAS.find((fs) => fs.metadata.name === 'catch-all')!;
const DEFAULT_LIMITED_SHARES = 30;

/** How long a refused client is told to wait: 1 s, doubled while refusals go on, up to 32 s; halved again in quiet. */
export class RetryAfter {
  private seconds = 1;
  private lastDrop = -Infinity;
  private streakStart = -Infinity;

  drop(nowMs: number): number {
    const second = Math.floor(nowMs / 1000);
    const gap = second - this.lastDrop;
    if (gap > 1) {
      let quiet = gap;
      while (this.seconds > 1 && quiet > this.seconds) {
        quiet -= this.seconds;
        this.seconds /= 2;
      }
      this.streakStart = second;
    } else if (second - this.streakStart >= this.seconds) {
      this.seconds = Math.min(32, this.seconds * 2);
      this.streakStart = second;
    }
    this.lastDrop = second;
    return this.seconds;
  }
}

export class PriorityAndFairness {
  private version = '';
  private schemas: FlowSchema[] = [];
  private levels = new Map<string, Level>();
  private readonly maxWaitMs: number;
  private readonly metrics: FlowControlMetrics;

  constructor(private readonly opts: PriorityAndFairnessOptions) {
    this.maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.metrics = new FlowControlMetrics(opts.registry, () => this.levels);
  }

  /** The first schema (by precedence) whose rules take the request, and its level. */
  classify(user: UserInfo, info: RequestInfo): Classification {
    this.refresh();
    const namespace = requestNamespace(info);
    for (const fs of this.schemas) {
      if (!flowSchemaMatches(fs, user, info, namespace)) continue;
      const level = this.levels.get(fs.spec.priorityLevelConfiguration.name)!;
      return { flowSchema: fs, priorityLevel: level.config, flowKey: `${fs.metadata.name}\0${flowDistinguisher(fs, user, info, namespace)}` };
    }
    // The catch-all schema matches everyone; only a request without groups could get here.
    return { flowSchema: CATCH_ALL_SCHEMA, priorityLevel: this.levels.get('catch-all')!.config, flowKey: 'catch-all\0' };
  }

  /**
   * Waits for the request's seats and gives back what frees them, or throws the 429 to answer.
   * `width`: seats it takes (1; more for big lists). `signal`: the client went away while it waited.
   */
  async admit(c: Classification, width: number, signal?: AbortSignal): Promise<Release> {
    const level = this.levels.get(c.priorityLevel.metadata.name!) ?? this.levels.get('catch-all')!;
    const fs = c.flowSchema.metadata.name!;
    const pl = level.config.metadata.name!;
    if (!level.queues) {
      const counter = level.exempt;
      counter.executing++;
      this.metrics.dispatched(fs, pl, 0);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        counter.executing--;
      };
    }
    const entered = this.opts.clock.now();
    const outcome = level.queues.enter(c.flowKey, width, signal);
    if (typeof outcome === 'function') {
      this.metrics.dispatched(fs, pl, 0);
      return outcome;
    }
    const settled = typeof outcome === 'string' ? outcome : await this.waited(fs, pl, outcome);
    const waitedMs = this.opts.clock.now() - entered;
    if (typeof settled === 'function') {
      this.metrics.dispatched(fs, pl, waitedMs);
      return settled;
    }
    this.metrics.rejected(fs, pl, settled, waitedMs);
    throw tooManyRequests('Too many requests, please try again later.', undefined, level.retryAfter.drop(this.opts.clock.now()));
  }

  private async waited(fs: string, pl: string, wait: Promise<Release | Rejection>): Promise<Release | Rejection> {
    this.metrics.queued(fs, pl, 1);
    try {
      return await wait;
    } finally {
      this.metrics.queued(fs, pl, -1);
    }
  }

  /** Rebuilds schemas and levels when the objects changed; levels that stay keep their queues and the requests in them. */
  private refresh(): void {
    const version = this.opts.source.version();
    if (version === this.version && this.levels.size > 0) return;
    this.version = version;
    const configs = withMandatory(this.opts.source.priorityLevels(), MANDATORY_PRIORITY_LEVELS);
    const shares = (pl: PriorityLevelConfiguration): number =>
      pl.spec?.type === 'Exempt' ? (pl.spec.exempt?.nominalConcurrencyShares ?? 0) : (pl.spec?.limited?.nominalConcurrencyShares ?? DEFAULT_LIMITED_SHARES);
    const total = configs.reduce((sum, pl) => sum + shares(pl), 0) || 1;
    const levels = new Map<string, Level>();
    for (const config of configs) {
      const name = config.metadata.name!;
      const before = this.levels.get(name);
      const nominalSeats = Math.ceil((this.opts.serverConcurrencyLimit * shares(config)) / total);
      const level: Level = { config, nominalSeats, retryAfter: before?.retryAfter ?? new RetryAfter(), exempt: before?.exempt ?? { executing: 0 } };
      if (config.spec?.type !== 'Exempt') {
        const response = config.spec?.limited?.limitResponse;
        const queueConfig = { concurrencyLimit: nominalSeats, ...(response?.type === 'Queue' && response.queuing ? { queuing: response.queuing } : {}) };
        level.queues = before?.queues ?? new QueueSet(queueConfig, this.opts.clock, this.maxWaitMs);
        if (before?.queues) before.queues.setConfig(queueConfig);
      }
      levels.set(name, level);
    }
    this.levels = levels;
    // A schema naming a level that does not exist is dangling: it takes no requests.
    const schemas = withMandatory(this.opts.source.flowSchemas(), MANDATORY_FLOW_SCHEMAS).filter((fs) => levels.has(fs.spec?.priorityLevelConfiguration?.name ?? ''));
    this.schemas = orderFlowSchemas(schemas);
  }
}

/** The objects as stored, with the built-in mandatory ones standing in for any that were deleted. */
function withMandatory<T extends { metadata: { name?: string } }>(stored: readonly T[], mandatory: readonly T[]): T[] {
  const names = new Set(stored.map((o) => o.metadata.name));
  return [...stored, ...mandatory.filter((m) => !names.has(m.metadata.name))];
}

/** upstream's apiserver_flowcontrol_* series, counted in plain maps and handed over when scraped. */
class FlowControlMetrics {
  private readonly dispatchedCount = new Map<string, number>();
  private readonly rejectedCount = new Map<string, number>();
  private readonly inQueue = new Map<string, number>();
  private readonly waitDuration: Histogram<'flow_schema' | 'priority_level' | 'execute'>;
  private readonly waitChildren = new Map<string, { observe(v: number): void }>();

  constructor(registry: Registry, levels: () => Map<string, Level>) {
    const registers = [registry];
    const drain = (counts: Map<string, number>, names: string[], inc: (labels: Record<string, string>, n: number) => void): void => {
      for (const [key, n] of counts) {
        if (n === 0) continue;
        const values = key.split('\0');
        inc(Object.fromEntries(names.map((name, i) => [name, values[i] ?? ''])), n);
        counts.set(key, 0);
      }
    };
    const dispatched = this.dispatchedCount;
    const rejected = this.rejectedCount;
    const inQueue = this.inQueue;
    new Counter({
      name: 'apiserver_flowcontrol_dispatched_requests_total',
      help: 'Requests released to run, by flow schema and priority level.',
      labelNames: ['flow_schema', 'priority_level'],
      registers,
      collect() {
        drain(dispatched, ['flow_schema', 'priority_level'], (l, n) => this.inc(l, n));
      },
    });
    new Counter({
      name: 'apiserver_flowcontrol_rejected_requests_total',
      help: 'Requests refused with 429, by flow schema, priority level and reason (queue-full, concurrency-limit, time-out, cancelled).',
      labelNames: ['flow_schema', 'priority_level', 'reason'],
      registers,
      collect() {
        drain(rejected, ['flow_schema', 'priority_level', 'reason'], (l, n) => this.inc(l, n));
      },
    });
    new Gauge({
      name: 'apiserver_flowcontrol_current_inqueue_requests',
      help: 'Requests waiting in a queue now, by flow schema and priority level.',
      labelNames: ['flow_schema', 'priority_level'],
      registers,
      collect() {
        for (const [key, n] of inQueue) {
          const [flow_schema = '', priority_level = ''] = key.split('\0');
          this.set({ flow_schema, priority_level }, n);
        }
      },
    });
    const perLevel = (name: string, help: string, value: (l: Level) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['priority_level'],
        registers,
        collect() {
          this.reset();
          for (const [priority_level, level] of levels()) this.set({ priority_level }, value(level));
        },
      });
    };
    perLevel('apiserver_flowcontrol_nominal_limit_seats', 'Seats each priority level is given (its share of the server\'s concurrency; 0 for exempt).', (l) => (l.queues ? l.nominalSeats : 0));
    perLevel('apiserver_flowcontrol_current_limit_seats', 'Seats each priority level may use now (no borrowing: its nominal seats).', (l) => (l.queues ? l.queues.concurrencyLimit : 0));
    perLevel('apiserver_flowcontrol_request_concurrency_limit', 'The same as apiserver_flowcontrol_current_limit_seats (upstream\'s older name).', (l) => (l.queues ? l.queues.concurrencyLimit : 0));
    perLevel('apiserver_flowcontrol_current_executing_seats', 'Seats held by requests running now.', (l) => (l.queues ? l.queues.executingSeats : l.exempt.executing));
    perLevel('apiserver_flowcontrol_current_inqueue_seats', 'Requests of each level waiting for seats now.', (l) => l.queues?.waiting ?? 0);
    this.waitDuration = new Histogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds',
      help: 'Seconds requests waited for their seats, by flow schema, priority level and whether they then ran.',
      labelNames: ['flow_schema', 'priority_level', 'execute'],
      buckets: [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30],
      registers,
    });
  }

  dispatched(fs: string, pl: string, waitedMs: number): void {
    const key = `${fs}\0${pl}`;
    this.dispatchedCount.set(key, (this.dispatchedCount.get(key) ?? 0) + 1);
    this.observeWait(fs, pl, 'true', waitedMs);
  }

  rejected(fs: string, pl: string, reason: Rejection, waitedMs: number): void {
    const key = `${fs}\0${pl}\0${reason}`;
    this.rejectedCount.set(key, (this.rejectedCount.get(key) ?? 0) + 1);
    this.observeWait(fs, pl, 'false', waitedMs);
  }

  queued(fs: string, pl: string, delta: number): void {
    const key = `${fs}\0${pl}`;
    this.inQueue.set(key, (this.inQueue.get(key) ?? 0) + delta);
  }

  private observeWait(fs: string, pl: string, execute: string, waitedMs: number): void {
    const key = `${fs}\0${pl}\0${execute}`;
    let child = this.waitChildren.get(key);
    if (!child) this.waitChildren.set(key, (child = this.waitDuration.labels({ flow_schema: fs, priority_level: pl, execute })));
    child.observe(waitedMs / 1000);
  }
}
