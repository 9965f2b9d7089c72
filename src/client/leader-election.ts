// Leader election on a coordination.k8s.io Lease, with client-go's semantics: a candidate takes a
// Lease only after it has seen the holder's record unchanged for a whole lease duration on its
// own clock (never trusting the holder's timestamps), and a leader that cannot renew within the
// renew deadline steps down.
import { microTime } from '../util/time.js';
import type { KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { ApiClient } from './rest.js';

export interface LeaderElectionConfig {
  client: ApiClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  clock: Clock;
  log: Logger;
  /** Runs while leading; the signal aborts when leadership is lost or the elector stops. */
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

type Lease = KubeObject & { spec?: LeaseSpec };


export class LeaderElector {
  private observedRecord = '';
  private observedTime = 0;
  private lastLeader = '';
  private leading = false;

  constructor(private readonly cfg: LeaderElectionConfig) {}

  get isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.cfg.namespace}/leases`;
  }

  private jitter(ms: number): number {
    return ms + Math.random() * ms * 0.2;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { clock, log } = this.cfg;
    while (!signal.aborted) {
      // Acquire.
      while (!signal.aborted && !(await this.tryAcquireOrRenew(signal))) {
        await clock.sleep(this.jitter(this.cfg.retryPeriodMs), signal).catch(() => {});
      }
      if (signal.aborted) break;
      this.leading = true;
      log.info({ lease: `${this.cfg.namespace}/${this.cfg.name}`, identity: this.cfg.identity }, 'became leader');
      const leadership = new AbortController();
      const stop = () => leadership.abort();
      signal.addEventListener('abort', stop, { once: true });
      this.cfg.onStartedLeading(leadership.signal);
      // Renew until a renewal cannot succeed within the deadline.
      let lastRenew = clock.now();
      while (!signal.aborted) {
        await clock.sleep(this.cfg.retryPeriodMs, signal).catch(() => {});
        if (signal.aborted) break;
        if (await this.tryAcquireOrRenew(signal)) {
          lastRenew = clock.now();
        } else if (clock.now() - lastRenew >= this.cfg.renewDeadlineMs) {
          break;
        }
      }
      signal.removeEventListener('abort', stop);
      leadership.abort();
      this.leading = false;
      this.cfg.onStoppedLeading?.();
      if (signal.aborted) {
        await this.release();
        break;
      }
      log.warn({ lease: `${this.cfg.namespace}/${this.cfg.name}` }, 'lost leadership: could not renew the lease within the renew deadline');
    }
  }

  /** Hands the Lease back so another candidate can take over at once (client-go's ReleaseOnCancel). */
  private async release(): Promise<void> {
    try {
      const lease = await this.cfg.client.get<Lease>(`${this.path}/${this.cfg.name}`, { timeoutMs: 2000 });
      if (lease.spec?.holderIdentity !== this.cfg.identity) return;
      const spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(this.cfg.clock.now()) };
      await this.cfg.client.replace(`${this.path}/${this.cfg.name}`, { ...lease, spec }, { timeoutMs: 2000 });
      this.cfg.log.info({ lease: `${this.cfg.namespace}/${this.cfg.name}` }, 'released leadership');
    } catch {
      /* the lease expires by itself */
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { client, clock, identity } = this.cfg;
    const now = clock.now();
    const durationSeconds = Math.ceil(this.cfg.leaseDurationMs / 1000);
    let lease: Lease;
    try {
      lease = await client.get<Lease>(`${this.path}/${this.cfg.name}`, { signal, timeoutMs: this.cfg.renewDeadlineMs });
    } catch (e) {
      if (!isStatusError(e, 'NotFound')) return false;
      try {
        await client.create(this.path, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.cfg.name, namespace: this.cfg.namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        }, { signal });
        this.observe(identity, now, `${identity}/${now}`);
        return true;
      } catch {
        return false;
      }
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (record !== this.observedRecord) this.observe(spec.holderIdentity ?? '', now, record);
    const holder = spec.holderIdentity ?? '';
    const held = holder !== '' && holder !== identity && this.observedTime + (spec.leaseDurationSeconds ?? durationSeconds) * 1000 > now;
    if (held) return false;
    const next: LeaseSpec =
      holder === identity
        ? { ...spec, renewTime: microTime(now), leaseDurationSeconds: durationSeconds }
        : { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    try {
      const updated = await client.replace<Lease>(`${this.path}/${this.cfg.name}`, { ...lease, spec: next }, { signal, timeoutMs: this.cfg.renewDeadlineMs });
      const u = updated.spec ?? {};
      this.observe(identity, now, JSON.stringify([u.holderIdentity, u.renewTime, u.leaseDurationSeconds]));
      return true;
    } catch {
      return false;
    }
  }

  private observe(holder: string, now: number, record: string): void {
    this.observedRecord = record;
    this.observedTime = now;
    if (holder && holder !== this.lastLeader) {
      this.lastLeader = holder;
      this.cfg.onNewLeader?.(holder);
    }
  }
}
