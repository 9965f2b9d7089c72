// Scrapes every node's /metrics/resource on an interval (metrics-server's --metric-resolution,
// 15 s by default), a few nodes at a time, into the metrics storage. Nodes whose agents serve
// no endpoint (a `skiff sim` fleet's) are not scraped: their figures are made from the pods'
// requests when asked (simulated-metrics.ts), so a fleet of thousands costs nothing here.
import type { KubeObject } from '../../api/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { parseResourceMetrics } from '../../resource-metrics/resource-text.js';
import type { MetricsStorage } from './metrics-storage.js';

export const DEFAULT_METRIC_RESOLUTION_MS = 15_000;
/** Scrapes at once: a slow node delays a few others, not the whole round. */
const CONCURRENCY = 8;

export interface NodeScraperDeps {
  clock: Clock;
  log: Logger;
  storage: MetricsStorage;
  /** The nodes to scrape (those whose agents serve an endpoint). */
  nodes(): KubeObject[];
  /** GET of a path on a node's agent. */
  fetch(node: KubeObject, path: string, timeoutMs: number): Promise<string>;
  resolutionMs?: number;
}

export class NodeScraper {
  private timer?: Timer;
  private stopped = false;
  /** Nodes whose last scrape failed (one log line when a node starts and stops failing). */
  private readonly failing = new Set<string>();
  readonly resolutionMs: number;

  constructor(private readonly d: NodeScraperDeps) {
    this.resolutionMs = d.resolutionMs ?? DEFAULT_METRIC_RESOLUTION_MS;
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      void this.scrapeAll().finally(() => {
        if (!this.stopped) this.timer = this.d.clock.setTimeout(tick, this.resolutionMs);
      });
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** One round over every node. */
  async scrapeAll(): Promise<void> {
    const nodes = this.d.nodes();
    const names = new Set(nodes.map((n) => n.metadata.name!));
    for (const name of this.d.storage.nodeNames()) if (!names.has(name)) this.d.storage.drop(name);
    for (const name of this.failing) if (!names.has(name)) this.failing.delete(name);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < nodes.length && !this.stopped) await this.scrape(nodes[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, nodes.length) }, worker));
  }

  private async scrape(node: KubeObject): Promise<void> {
    const name = node.metadata.name!;
    try {
      // A scrape must end well within a round, as metrics-server's timeout is 0.9 of its resolution.
      const text = await this.d.fetch(node, '/metrics/resource', Math.max(1000, Math.floor(this.resolutionMs * 0.9)));
      const at = this.d.clock.now();
      this.d.storage.store(name, parseResourceMetrics(text, at), at);
      if (this.failing.delete(name)) this.d.log.info({ node: name }, 'resource metrics can be scraped from the node again');
    } catch (e) {
      if (!this.failing.has(name)) this.d.log.warn({ node: name, err: errorText(e) }, 'could not scrape resource metrics from the node');
      this.failing.add(name);
    }
  }
}
