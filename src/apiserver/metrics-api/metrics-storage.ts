// What the scraper last read from each node, as metrics-server keeps it: the last two samples of
// the node's counters and of each container's, so a rate is the growth between two scrapes over
// the time between them (the window). Containers missing from a node's latest scrape are gone.
import type { ScrapedNode } from '../../resource-metrics/resource-text.js';
import { SamplePair, type UsageRate } from '../../resource-metrics/usage-rate.js';

interface ContainerEntry {
  pair: SamplePair;
  startedAtMs?: number;
}

interface NodeEntry {
  node: SamplePair;
  /** By "namespace/pod", then container name. */
  pods: Map<string, Map<string, ContainerEntry>>;
  scrapedAtMs: number;
  prevScrapedAtMs?: number;
}

export class MetricsStorage {
  private readonly nodes = new Map<string, NodeEntry>();
  /** "namespace/pod" → the node its figures came from. */
  private readonly podNode = new Map<string, string>();

  store(nodeName: string, scraped: ScrapedNode, scrapedAtMs: number): void {
    const before = this.nodes.get(nodeName);
    const entry: NodeEntry = { node: before?.node ?? new SamplePair(), pods: new Map(), scrapedAtMs, ...(before ? { prevScrapedAtMs: before.scrapedAtMs } : {}) };
    if (scraped.node) entry.node.push(scraped.node);
    for (const c of scraped.containers) {
      const podKey = `${c.namespace}/${c.pod}`;
      let pod = entry.pods.get(podKey);
      if (!pod) entry.pods.set(podKey, (pod = new Map()));
      const old = before?.pods.get(podKey)?.get(c.container);
      // A restarted container's counter starts again: its samples before the restart measure another instance.
      const pair = old && (old.startedAtMs === c.startedAtMs || c.startedAtMs === undefined) ? old.pair : new SamplePair();
      pair.push({ timestampMs: c.timestampMs, cpuCoreNanoSeconds: c.cpuCoreNanoSeconds, memoryWorkingSetBytes: c.memoryWorkingSetBytes });
      pod.set(c.container, { pair, ...(c.startedAtMs !== undefined ? { startedAtMs: c.startedAtMs } : {}) });
    }
    if (before) for (const podKey of before.pods.keys()) if (!entry.pods.has(podKey) && this.podNode.get(podKey) === nodeName) this.podNode.delete(podKey);
    for (const podKey of entry.pods.keys()) this.podNode.set(podKey, nodeName);
    this.nodes.set(nodeName, entry);
  }

  /** Forgets a node (deleted, or no longer scraped). */
  drop(nodeName: string): void {
    const entry = this.nodes.get(nodeName);
    if (!entry) return;
    for (const podKey of entry.pods.keys()) if (this.podNode.get(podKey) === nodeName) this.podNode.delete(podKey);
    this.nodes.delete(nodeName);
  }

  nodeNames(): string[] {
    return [...this.nodes.keys()];
  }

  nodeRate(nodeName: string): UsageRate | undefined {
    return this.nodes.get(nodeName)?.node.rate();
  }

  /** Each container's rate; undefined unless every container the pod was last scraped with has one. */
  podRates(namespace: string, pod: string): { container: string; rate: UsageRate }[] | undefined {
    const podKey = `${namespace}/${pod}`;
    const nodeName = this.podNode.get(podKey);
    const entry = nodeName === undefined ? undefined : this.nodes.get(nodeName);
    const containers = entry?.pods.get(podKey);
    if (!entry || !containers || containers.size === 0) return undefined;
    const out: { container: string; rate: UsageRate }[] = [];
    for (const [name, c] of containers) {
      const rate = c.pair.rate(c.startedAtMs, entry.prevScrapedAtMs);
      if (!rate) return undefined;
      out.push({ container: name, rate });
    }
    return out;
  }
}
