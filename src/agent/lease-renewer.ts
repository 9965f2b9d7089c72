// Node heartbeat through the Lease in kube-node-lease (N2): renewed every quarter of its duration
// from the copy last written (no GET), falling back to "ensure" (GET, then create or fix the owner)
// when that fails. A Lease is only ever created with an ownerReference to the live Node: the Node's
// UID comes from a live GET right before the create, never from memory, so the agent cannot leave
// ownerless Leases behind (upstream bug #109777).
import type { Lease } from '../api/kinds/lease.js';
import type { Node } from '../api/kinds/node.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi, HEARTBEAT, MACHINE_ID_ANNOTATION, NODE_LEASE_NAMESPACE, isConflict, isNotFound, leasePath, leasesPath, nodePath } from './api.js';
import { errorText } from '../util/error-text.js';
import { microTime } from '../util/time.js';
import { Backoff, Waker } from './wake.js';

export interface LeaseRenewerOptions {
  api: AgentApi;
  clock: Clock;
  log: Logger;
  nodeName: string;
  machineId: string;
  leaseDurationSeconds: number;
  /** UID of the Node as the node keeper last saw it; undefined while there is none. */
  nodeUid(): string | undefined;
  /** The Node answered 404 when the Lease needed its owner: the node keeper confirms and acts. */
  onNodeMissing(source: string): void;
  /** Classic (upstream) mode: log as the kubelet's lease controller does. */
  classic?: boolean;
}

export class LeaseRenewer {
  private lease?: Lease;
  private failing = false;
  private stopped = false;
  private readonly waker = new Waker();
  private readonly backoff: Backoff;
  /** Renewals that succeeded, for tests and metrics. */
  renewals = 0;

  constructor(private readonly o: LeaseRenewerOptions) {
    this.backoff = new Backoff(200, this.intervalMs);
  }

  get intervalMs(): number {
    return (this.o.leaseDurationSeconds * 1000) / 4;
  }

  get current(): Lease | undefined {
    return this.lease;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.stopped) {
      const ok = await this.sync();
      if (ok) this.backoff.reset();
      await this.waker.sleep(this.o.clock, ok ? this.intervalMs : this.backoff.next(), signal);
    }
  }

  /** Renew at once (after a re-registration: the Lease must follow the new Node). */
  kick(): void {
    this.waker.wake();
  }

  stop(): void {
    this.stopped = true;
    this.waker.wake();
  }

  private desired(base: Lease | undefined, ownerUid: string): Lease {
    const now = this.o.clock.now();
    const meta = base?.metadata ?? { name: this.o.nodeName, namespace: NODE_LEASE_NAMESPACE };
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...meta,
        annotations: { ...(meta.annotations ?? {}), [MACHINE_ID_ANNOTATION]: this.o.machineId },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: ownerUid }],
      },
      spec: {
        ...(base?.spec ?? {}),
        holderIdentity: this.o.nodeName,
        leaseDurationSeconds: this.o.leaseDurationSeconds,
        renewTime: microTime(now),
      },
    };
  }

  private ownerUid(lease: Lease): string | undefined {
    return lease.metadata.ownerReferences?.find((r) => r.kind === 'Node')?.uid;
  }

  /** One renewal; true when the Lease is current. */
  async sync(): Promise<boolean> {
    const uid = this.o.nodeUid();
    if (!uid) return false; // no Node, so nothing may own a Lease: wait for the keeper
    if (this.lease && this.ownerUid(this.lease) === uid) {
      try {
        this.lease = await this.o.api.replace<Lease>(leasePath(this.o.nodeName), this.desired(this.lease, uid), HEARTBEAT);
        return this.succeeded();
      } catch (e) {
        this.lease = undefined;
        if (!isNotFound(e) && !isConflict(e)) return this.failed(e);
        if (this.o.classic) this.o.log.error({ err: errorText(e) }, 'failed to update lease using latest lease, fallback to ensure lease');
      }
    }
    return this.ensure();
  }

  private async ensure(): Promise<boolean> {
    let existing: Lease | undefined;
    try {
      existing = await this.o.api.get<Lease>(leasePath(this.o.nodeName));
    } catch (e) {
      if (!isNotFound(e)) return this.failed(e);
    }
    // The owner is read live, as upstream's SetNodeOwnerFunc does: a deleted Node blocks the Lease.
    let node: Node;
    try {
      node = await this.o.api.get<Node>(nodePath(this.o.nodeName));
    } catch (e) {
      if (isNotFound(e)) {
        if (this.o.classic) this.o.log.error({ node: this.o.nodeName, err: errorText(e) }, 'Failed to get node when trying to set owner ref to the node lease');
        this.o.onNodeMissing('lease');
        return false;
      }
      return this.failed(e);
    }
    const uid = node.metadata.uid!;
    try {
      this.lease = existing
        ? await this.o.api.replace<Lease>(leasePath(this.o.nodeName), this.desired(existing, uid), HEARTBEAT)
        : await this.o.api.create<Lease>(leasesPath(), this.desired(undefined, uid));
      return this.succeeded();
    } catch (e) {
      return this.failed(e);
    }
  }

  private succeeded(): boolean {
    this.renewals++;
    if (this.failing) {
      this.failing = false;
      this.o.log.info({ node: this.o.nodeName }, 'lease renewal recovered');
    }
    return true;
  }

  private failed(e: unknown): boolean {
    if (this.o.classic) {
      this.o.log.error({ err: errorText(e) }, 'failed to ensure lease exists, will retry');
    } else if (!this.failing) {
      this.failing = true;
      this.o.log.warn({ node: this.o.nodeName, err: errorText(e) }, 'lease renewal failing; retrying with back-off');
    }
    return false;
  }

  /** Deletes the Lease (graceful exit, retirement). */
  async remove(): Promise<void> {
    this.stop();
    let uid = this.lease?.metadata.uid;
    if (!uid) {
      // Not written by this agent yet: only remove it if it carries this machine's id.
      try {
        const l = await this.o.api.get<Lease>(leasePath(this.o.nodeName));
        if (l.metadata.annotations?.[MACHINE_ID_ANNOTATION] !== this.o.machineId) return;
        uid = l.metadata.uid;
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
    }
    try {
      await this.o.api.delete(leasePath(this.o.nodeName), uid ? { preconditions: { uid } } : undefined);
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    this.lease = undefined;
  }
}
