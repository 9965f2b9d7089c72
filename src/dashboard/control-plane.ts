// The control plane as the dashboard shows it: the members default/kubernetes lists and the ones
// whose endpoint Leases say they were members, each asked for its /readyz (which carries the
// storage check), which member holds the leader-election Leases, and the autoscaler's status.
import type { Lease } from '../api/kinds/lease.js';
import type { KubeObject } from '../api/types.js';
import { serversFromEndpoints } from '../client/endpoint-discovery.js';
import { ApiClient } from '../client/rest.js';
import { isMemberLease, leaseMember, memberAddress, membersByControllerIdentity } from '../server/endpoint-reconciler.js';
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/log.js';
import { timestampMs } from '../api/kinds/printing.js';
import type { ControlPlaneView, LeaderLock, Member } from './view.js';

export interface Readiness {
  ready: string;
  storage?: string;
}

/** Every member default/kubernetes lists, and every one an endpoint Lease (live or expired) names. */
function membersOf(endpoints: KubeObject[], systemLeases: Lease[]): Map<string, Member> {
  const members = new Map<string, Member>();
  for (const u of endpoints[0] ? serversFromEndpoints(endpoints[0]) : []) {
    const address = u.replace(/^https:\/\//, '');
    members.set(address, { address, listed: true, ready: 'unknown' });
  }
  for (const l of systemLeases) {
    const m = isMemberLease(l) ? leaseMember(l) : undefined;
    if (!m) continue;
    const address = memberAddress(m);
    const renewedAt = timestampMs(l.spec?.renewTime);
    members.set(address, { ...(members.get(address) ?? { address, listed: false, ready: 'unknown' }), ...(renewedAt !== undefined ? { leaseRenewedAt: renewedAt } : {}) });
  }
  return members;
}

/** The addresses the member probes ask. */
export function memberAddresses(endpoints: KubeObject[], systemLeases: Lease[]): string[] {
  return [...membersOf(endpoints, systemLeases).keys()];
}

export function controlPlaneView(endpoints: KubeObject[], systemLeases: Lease[], health: ReadonlyMap<string, Readiness>, autoscalerStatus: KubeObject | undefined): ControlPlaneView {
  const members = [...membersOf(endpoints, systemLeases).values()].map((m) => {
    const h = health.get(m.address);
    return h ? { ...m, ready: h.ready, ...(h.storage !== undefined ? { storage: h.storage } : {}) } : m;
  });
  const byIdentity = membersByControllerIdentity(systemLeases);
  const leaders: LeaderLock[] = [];
  for (const l of systemLeases) {
    if (isMemberLease(l)) continue;
    const renewedAt = timestampMs(l.spec?.renewTime);
    const holder = l.spec?.holderIdentity ?? '';
    const member = byIdentity.get(holder);
    leaders.push({ name: l.metadata.name!, holder, ...(member !== undefined ? { member } : {}), ...(renewedAt !== undefined ? { renewedAt } : {}) });
  }
  const status = (autoscalerStatus?.data as Record<string, string> | undefined)?.status;
  return {
    members: members.sort((a, b) => a.address.localeCompare(b.address)),
    leaders: leaders.sort((a, b) => a.name.localeCompare(b.name)),
    ...(status !== undefined ? { autoscalerStatus: status } : {}),
  };
}

/** What a /readyz?verbose answer says: ready or why not, and its storage check. */
export function parseReadyz(text: string): Readiness {
  const storage = /^\[([+-])\]etcd(?: ok| failed: (.*))?$/m.exec(text);
  const failed = [...text.matchAll(/^\[-\](\S+) failed: (.*)$/gm)].map((m) => `${m[1]}: ${m[2]}`);
  return { ready: failed.length ? failed.join('; ') : 'ok', ...(storage ? { storage: storage[1] === '+' ? 'ok' : (storage[2] ?? 'failed') } : {}) };
}

export interface MemberHealthOptions {
  /** The dashboard's client: each member is asked with the same credentials and CA. */
  client: ApiClient;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  changed(): void;
}

/** Asks every member for its /readyz, one member at a time each round, each with a client of its own. */
export class MemberHealth {
  readonly results = new Map<string, Readiness>();
  private readonly clients = new Map<string, ApiClient>();

  constructor(private readonly o: MemberHealthOptions) {}

  async run(signal: AbortSignal, addresses: () => string[]): Promise<void> {
    while (!signal.aborted) {
      const current = new Set(addresses());
      for (const address of current) await this.probe(address, signal);
      for (const [address, c] of this.clients) {
        if (current.has(address)) continue;
        c.close();
        this.clients.delete(address);
        if (this.results.delete(address)) this.o.changed();
      }
      await this.o.clock.sleep(this.o.intervalMs, signal).catch(() => {});
    }
    for (const c of this.clients.values()) c.close();
  }

  private async probe(address: string, signal: AbortSignal): Promise<void> {
    let client = this.clients.get(address);
    if (!client) this.clients.set(address, (client = this.o.client.forServers([`https://${address}`], { timeoutMs: 2_000 })));
    let r: Readiness;
    try {
      r = parseReadyz(await client.request<string>('GET', '/readyz', { query: { verbose: '1' }, accept: 'text/plain', signal }));
    } catch (e) {
      const text = errorText(e);
      r = /\[[+-]\]/.test(text) ? parseReadyz(text) : { ready: text.split('\n')[0] ?? 'unreachable' };
    }
    const before = this.results.get(address);
    if (before?.ready !== r.ready || before?.storage !== r.storage) {
      this.results.set(address, r);
      this.o.changed();
    }
  }
}
