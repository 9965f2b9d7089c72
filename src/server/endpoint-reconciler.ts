// Every API server keeps its advertise address in `default/kubernetes` Endpoints, backed by a
// Lease it renews (upstream's lease endpoint reconciler: 10 s interval, 15 s TTL). Agents read
// these Endpoints to learn all members and fail over among them.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { KubeList, KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { ApiClient } from '../client/rest.js';
import { microTime } from '../util/time.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { SERVICE_NAME_LABEL } from '../controllers/endpointslices.js';

export const APISERVER_LEASE_LABEL = 'skiff.dev/apiserver-endpoint';
/**
 * On a member's endpoint Lease: the identity its controller manager elects with. A leader Lease
 * holds that identity (upstream's hostname_uuid, the same on every member of one machine), and
 * this is how a reader tells which member it is.
 */
export const CONTROLLER_IDENTITY_ANNOTATION = 'skiff.dev/controller-identity';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const ENDPOINTS = '/api/v1/namespaces/default/endpoints';
const SERVICES = '/api/v1/namespaces/default/services';
const ENDPOINT_SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';

export interface EndpointReconcilerOptions {
  client: ApiClient;
  clock: Clock;
  log: Logger;
  /** This member's address as agents should reach it. */
  host: string;
  port: number;
  /** The identity this member's controller manager elects with, written on its Lease. */
  controllerIdentity?: string;
  intervalMs?: number;
  ttlMs?: number;
}

export interface Member {
  host: string;
  port: number;
}

export const APISERVER_LEASES_PATH = LEASES;

/** The member an API server's endpoint Lease stands for (its holder, `host:port`), whether live or expired. */
export function leaseMember(lease: KubeObject): Member | undefined {
  const m = /^\[?(.+?)\]?:(\d+)$/.exec(String(((lease.spec ?? {}) as { holderIdentity?: string }).holderIdentity ?? ''));
  return m ? { host: m[1]!, port: Number(m[2]) } : undefined;
}

/** Whether a kube-system Lease is a member's endpoint Lease (not a leader-election one). */
export function isMemberLease(l: KubeObject): boolean {
  return l.metadata.labels?.[APISERVER_LEASE_LABEL] !== undefined;
}

/** `host:port`, the IPv6 host in brackets. */
export function memberAddress(m: Member): string {
  return `${m.host.includes(':') ? `[${m.host}]` : m.host}:${m.port}`;
}

/**
 * Member addresses by the identity their controller managers elect with, as each member's endpoint
 * Lease says. A holder identity alone names no member: it is hostname_uuid, and the members of one
 * machine share the hostname.
 */
export function membersByControllerIdentity(systemLeases: readonly KubeObject[]): Map<string, string> {
  const byIdentity = new Map<string, string>();
  for (const l of systemLeases) {
    const identity = l.metadata.annotations?.[CONTROLLER_IDENTITY_ANNOTATION];
    const m = isMemberLease(l) ? leaseMember(l) : undefined;
    if (identity && m) byIdentity.set(identity, memberAddress(m));
  }
  return byIdentity;
}

export class EndpointReconciler {
  private readonly leaseName: string;
  private readonly interval: number;
  private readonly ttl: number;

  constructor(private readonly o: EndpointReconcilerOptions) {
    this.leaseName = `skiff-apiserver-${createHash('sha256').update(`${o.host}:${o.port}`).digest('hex').slice(0, 12)}`;
    this.interval = o.intervalMs ?? 10_000;
    this.ttl = o.ttlMs ?? 15_000;
  }

  async run(signal: AbortSignal): Promise<void> {
    let failing = false;
    while (!signal.aborted) {
      try {
        await this.renewOwnLease();
        await this.reconcile();
        if (failing) this.o.log.info({}, 'endpoint reconciler recovered');
        failing = false;
      } catch (e) {
        if (signal.aborted) break;
        if (!failing) this.o.log.warn({ err: (e as Error).message }, 'could not update default/kubernetes endpoints; retrying');
        failing = true;
      }
      await this.o.clock.sleep(failing ? Math.min(this.interval, 2000) : this.interval, signal).catch(() => {});
    }
  }

  /** Removes this member at once (graceful exit), so agents stop trying it. */
  async removeSelf(): Promise<void> {
    try {
      await this.o.client.delete(`${LEASES}/${this.leaseName}`, undefined, { timeoutMs: 3000 });
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) return;
    }
    await this.reconcile().catch(() => {});
  }

  private async renewOwnLease(): Promise<void> {
    const now = microTime(this.o.clock.now());
    const spec = { holderIdentity: `${this.o.host}:${this.o.port}`, leaseDurationSeconds: Math.ceil(this.ttl / 1000), renewTime: now };
    const identity = this.o.controllerIdentity;
    const annotations = identity !== undefined ? { [CONTROLLER_IDENTITY_ANNOTATION]: identity } : {};
    try {
      const lease = await this.o.client.get<KubeObject>(`${LEASES}/${this.leaseName}`);
      // A restarted member elects with a new identity: the Lease it finds says the old one.
      const metadata = identity !== undefined ? { ...lease.metadata, annotations: { ...lease.metadata.annotations, ...annotations } } : lease.metadata;
      await this.o.client.replace(`${LEASES}/${this.leaseName}`, { ...lease, metadata, spec: { ...(lease.spec as object), ...spec } });
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) throw e;
      await this.o.client.create(LEASES, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.leaseName, labels: { [APISERVER_LEASE_LABEL]: 'true' }, ...(identity !== undefined ? { annotations } : {}) },
        spec: { ...spec, acquireTime: now },
      });
    }
  }

  private async liveMembers(): Promise<Member[]> {
    const leases = await this.o.client.get<KubeList>(LEASES, { query: { labelSelector: `${APISERVER_LEASE_LABEL}=true` } });
    const now = this.o.clock.now();
    const members: Member[] = [];
    for (const l of leases.items) {
      const spec = (l.spec ?? {}) as { renewTime?: string; leaseDurationSeconds?: number };
      const renewed = Date.parse(spec.renewTime ?? '');
      if (!(renewed + (spec.leaseDurationSeconds ?? 15) * 1000 > now)) continue;
      const member = leaseMember(l);
      if (member) members.push(member);
    }
    return members.sort((a, b) => `${a.host}:${a.port}`.localeCompare(`${b.host}:${b.port}`));
  }

  async reconcile(): Promise<void> {
    const members = await this.liveMembers();
    const byPort = new Map<number, string[]>();
    for (const m of members) byPort.set(m.port, [...(byPort.get(m.port) ?? []), m.host]);
    const subsets = [...byPort].map(([port, hosts]) => ({ addresses: hosts.map((ip) => ({ ip })), ports: [{ name: 'https', port, protocol: 'TCP' }] }));
    await this.ensureService(members[0]?.port ?? this.o.port);
    let current: KubeObject | undefined;
    try {
      current = await this.o.client.get<KubeObject>(`${ENDPOINTS}/kubernetes`);
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) throw e;
    }
    if (!current) {
      // The slice below is written by the servers themselves: nothing is to mirror these Endpoints.
      await this.o.client.create(ENDPOINTS, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', labels: { [SKIP_MIRROR_LABEL]: 'true' } }, subsets });
    } else if (JSON.stringify(current.subsets ?? []) !== JSON.stringify(subsets)) {
      await this.o.client.replace(`${ENDPOINTS}/kubernetes`, { ...current, subsets });
      this.o.log.info({ members: members.map((m) => `${m.host}:${m.port}`) }, 'default/kubernetes endpoints updated');
    }
    await this.reconcileSlice(members);
  }

  /** The same members as the `kubernetes` EndpointSlice, as upstream's servers keep it (one port: members share it on one machine or none). */
  private async reconcileSlice(members: Member[]): Promise<void> {
    const port = members[0]?.port ?? this.o.port;
    // A slice holds addresses of one family; members advertised by name have no place in it.
    const v6 = members.length > 0 && members.every((m) => isIP(m.host) === 6);
    const wanted = {
      addressType: v6 ? 'IPv6' : 'IPv4',
      endpoints: members.filter((m) => m.port === port && isIP(m.host) === (v6 ? 6 : 4)).map((m) => ({ addresses: [m.host], conditions: { ready: true } })),
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    };
    let current: KubeObject | undefined;
    try {
      current = await this.o.client.get<KubeObject>(`${ENDPOINT_SLICES}/kubernetes`);
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) throw e;
    }
    const slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'kubernetes', labels: { [SERVICE_NAME_LABEL]: 'kubernetes' } }, ...wanted };
    if (!current) {
      await this.o.client.create(ENDPOINT_SLICES, slice).catch((e: unknown) => {
        if (!isStatusError(e, 'AlreadyExists')) throw e;
      });
      return;
    }
    const have = { addressType: current.addressType, endpoints: current.endpoints, ports: current.ports };
    if (JSON.stringify(have) !== JSON.stringify(wanted)) await this.o.client.replace(`${ENDPOINT_SLICES}/kubernetes`, { ...current, ...wanted });
  }

  private async ensureService(targetPort: number): Promise<void> {
    try {
      await this.o.client.get(`${SERVICES}/kubernetes`);
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) throw e;
      try {
        await this.o.client.create(SERVICES, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort }] },
        });
      } catch (err) {
        if (!isStatusError(err, 'AlreadyExists')) throw err;
      }
    }
  }
}
