// Learning every API server from `default/kubernetes` Endpoints (N12). Each member keeps itself
// there through a 15 s TTL lease (src/server/endpoint-reconciler.ts); an agent started with one
// member's address reads the Endpoints right away and then every intervalMs, and hands the merged
// list (its configured --server URLs and the discovered members, in its preference order) to whoever keeps it: the
// ApiClient (failover) and the agent's data dir (so a restart works when the original member is gone).
import type { KubeObject } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { ApiClient } from './rest.js';

export const KUBERNETES_ENDPOINTS_PATH = '/api/v1/namespaces/default/endpoints/kubernetes';

interface EndpointSubset {
  addresses?: { ip?: string }[];
  ports?: { name?: string; port?: number }[];
}

/** `https://ip:port` for every address × https port in the Endpoints, sorted for a stable order. */
export function serversFromEndpoints(ep: KubeObject): string[] {
  const out: string[] = [];
  for (const s of (ep.subsets ?? []) as EndpointSubset[]) {
    const ports = (s.ports ?? []).filter((p) => typeof p.port === 'number' && (p.name === undefined || p.name === 'https'));
    for (const a of s.addresses ?? []) {
      if (!a.ip) continue;
      const host = a.ip.includes(':') ? `[${a.ip}]` : a.ip;
      for (const p of ports) out.push(`https://${host}:${p.port}`);
    }
  }
  return [...new Set(out)].sort();
}

/** Configured URLs keep their place (they are the preference); discovered members follow. */
export function mergeServers(configured: readonly string[], discovered: readonly string[]): string[] {
  const norm = (u: string) => u.replace(/\/+$/, '');
  return [...new Set([...configured, ...discovered].filter(Boolean).map(norm))];
}

export interface EndpointDiscoveryOptions {
  client: ApiClient;
  /** The --server URLs: always kept, first. */
  configured: readonly string[];
  clock: Clock;
  log: Logger;
  /** Re-read period. Default 10 s (the reconciler's renew interval). */
  intervalMs?: number;
  /** Receives every changed list (already set on the client). */
  onServers?(servers: string[]): void;
  /** The preference order of the merged list (agents: spread over the members); default as merged. */
  order?(servers: string[]): string[];
}

export class EndpointDiscovery {
  private last: string[] = [];

  constructor(private readonly o: EndpointDiscoveryOptions) {}

  get servers(): readonly string[] {
    return this.last;
  }

  /** One read; true when it succeeded. An empty or unreadable Endpoints keeps the current list. */
  async refresh(signal?: AbortSignal): Promise<boolean> {
    let ep: KubeObject;
    try {
      ep = await this.o.client.get<KubeObject>(KUBERNETES_ENDPOINTS_PATH, { ...(signal ? { signal } : {}), timeoutMs: 5000 });
    } catch (e) {
      this.o.log.debug({ err: (e as Error).message }, 'cannot read default/kubernetes endpoints');
      return false;
    }
    const discovered = serversFromEndpoints(ep);
    if (discovered.length === 0) return true;
    const merged = (this.o.order ?? ((x: string[]) => x))(mergeServers(this.o.configured, discovered));
    if (merged.join(',') !== this.last.join(',')) {
      const before = this.o.client.serverList.join(',');
      this.last = merged;
      this.o.client.setServers(merged);
      if (before !== merged.join(',')) this.o.log.info({ servers: merged }, 'API servers discovered from default/kubernetes');
      this.o.onServers?.(merged);
    }
    return true;
  }

  /** Re-reads until the signal aborts; `lastOk` is the outcome of a refresh the caller just did. */
  async run(signal: AbortSignal, lastOk = true): Promise<void> {
    const interval = this.o.intervalMs ?? 10_000;
    let ok = lastOk;
    while (!signal.aborted) {
      await this.o.clock.sleep(ok ? interval : Math.min(interval, 2000), signal).catch(() => {});
      if (signal.aborted) break;
      ok = await this.refresh(signal);
    }
  }
}
