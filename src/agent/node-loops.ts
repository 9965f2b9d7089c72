// The three loops that keep one node's objects in the API — the node keeper (register, self-heal,
// retire), the Lease renewer and the status reporter — wired to each other as every node needs
// them: a re-created Node kicks the Lease and a status report; a 404 seen by either loop makes the
// keeper check. `skiff agent` runs one set; `skiff sim` runs one per simulated node.
import type { Node } from '../api/kinds/node.js';
import { deleteNode, withinDeadline } from './drain.js';
import { nodeConditionEventReason } from './events.js';
import { LeaseRenewer } from './lease-renewer.js';
import { NodeKeeper, type NodeKeeperOptions } from './node-keeper.js';
import { currentConditions, nodeStatus, withTimes, type Readiness } from './node-object.js';
import { StatusReporter } from './status-reporter.js';
import { nodeStagesFor, stagedConditions, type NodeStage } from './runtimes/sim-stages.js';

/** What the keeper needs, and what the Lease and status loops add. */
export interface NodeLoopsOptions extends Pick<NodeKeeperOptions, 'api' | 'clock' | 'log' | 'cfg' | 'state' | 'events' | 'reregister'> {
  leaseDurationSeconds: number;
  statusUpdateFrequencyMs: number;
  statusReportFrequencyMs: number;
  /** The node's readiness now (a node shutting down reports not ready). */
  readiness(): Readiness;
  onRetire(): void;
  /** Simulated: conditions the stages set over time (those matching this node apply). */
  conditionStages?: readonly NodeStage[];
  /**
   * The Lease renewals' and status reports' own way to the API, as the kubelet's heartbeat
   * client is: they then never queue behind the node's other traffic (pod status, events). `api` where unset.
   */
  heartbeatApi?: NodeKeeperOptions['api'];
}

export class NodeLoops {
  readonly keeper: NodeKeeper;
  readonly lease: LeaseRenewer;
  readonly status: StatusReporter;

  constructor(private readonly o: NodeLoopsOptions) {
    const name = o.cfg.nodeName;
    const started = o.clock.now();
    const staged = nodeStagesFor(o.conditionStages ?? [], name, o.cfg.labels);
    const conditions = (now: number) => {
      const own = currentConditions(o.readiness());
      if (staged.length === 0) return own;
      // A stage's condition stands in for the node's own of that type, or joins them.
      const over = stagedConditions(staged, now - started).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
      return [...own.filter((c) => !over.some((x) => x.type === c.type)), ...over];
    };
    const buildStatus = (prev: Parameters<typeof withTimes>[1], now: number) => nodeStatus(o.cfg, withTimes(conditions(now), prev, now));
    this.keeper = new NodeKeeper({
      api: o.api,
      clock: o.clock,
      log: o.log,
      cfg: o.cfg,
      state: o.state,
      events: o.events,
      reregister: o.reregister,
      initialStatus: (now) => buildStatus(undefined, now),
      onNodeChanged: () => {
        this.lease.kick();
        this.status.kick();
      },
      onRetire: () => o.onRetire(),
    });
    this.lease = new LeaseRenewer({
      api: o.heartbeatApi ?? o.api,
      clock: o.clock,
      log: o.log,
      nodeName: name,
      machineId: o.cfg.machineId,
      leaseDurationSeconds: o.leaseDurationSeconds,
      nodeUid: () => this.keeper.uid,
      onNodeMissing: (source) => void this.keeper.check(source),
      classic: !o.reregister,
    });
    this.status = new StatusReporter({
      api: o.heartbeatApi ?? o.api,
      clock: o.clock,
      log: o.log,
      nodeName: name,
      updateFrequencyMs: o.statusUpdateFrequencyMs,
      reportFrequencyMs: o.statusReportFrequencyMs,
      buildStatus: (prev, now) => buildStatus(prev?.conditions, now),
      onNodeMissing: (source) => void this.keeper.check(source),
      classic: !o.reregister,
      onConditionsChanged: (changed) => {
        for (const c of changed) {
          const reason = nodeConditionEventReason(c.type, c.status);
          if (reason) void o.events.node(reason, `Node ${name} status is now: ${reason}`);
        }
      },
    });
  }

  /** What a watch on this node's Node delivers. */
  observedNode(n: Node): void {
    this.keeper.observedNode(n);
  }

  deletedNode(n: Node): void {
    this.keeper.deletedNode(n);
  }

  /** Registers (or adopts) the Node, then the Lease: a node shown Ready always has its Lease. */
  async register(signal: AbortSignal): Promise<void> {
    await this.keeper.register(signal);
    await this.lease.sync().catch(() => false);
  }

  /** The Lease and status loops, until the signal aborts. */
  run(signal: AbortSignal): Promise<unknown>[] {
    return [this.lease.run(signal), this.status.run(signal)];
  }

  stop(): void {
    this.lease.stop();
    this.status.stop();
  }

  /**
   * Leaving (N5, N6): the Lease, then the Node, within the deadline; false when they could not
   * both be removed in time. Only a Node this node registered or adopted is removed (never one
   * it refused to adopt, N4).
   */
  async remove(deadline: number): Promise<boolean> {
    const uid = this.keeper.current?.metadata.uid;
    if (!uid) return true;
    const leaseGone = await withinDeadline(this.o.clock, deadline, () => this.lease.remove());
    const nodeGone = await withinDeadline(this.o.clock, deadline, () => deleteNode(this.o.api, this.o.cfg.nodeName, uid));
    return leaseGone && nodeGone;
  }
}
