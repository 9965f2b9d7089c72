// A fleet of simulated nodes in one process (`skiff sim`). Each node is an agent on the wire: it
// registers its Node and restores it when it is deleted (the node keeper), renews its Lease,
// reports status on change and at the report frequency, and runs its pods on the simulated
// runtime through the agent's own pod sync — the same code `skiff agent` runs, one set per node.
//
// What is shared, and why that is honest: one client (a credential allowed to impersonate nodes)
// whose requests each act as their node, so the server authorizes every node's writes as that
// node; and two watches for the whole fleet — the Nodes it runs (by label) and the pods bound to
// any node — dispatched by node name, where N agents would hold 2N watches. The per-node reads a
// real agent makes on a 404 (a live GET before re-creating its Node) are made per node.
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Node } from '../api/kinds/node.js';
import type { Pod } from '../api/kinds/pod.js';
import { EventRecorder } from '../agent/events.js';
import { NodeLoops } from '../agent/node-loops.js';
import { READY, simulatedCapacity, type NodeConfig, type Readiness } from '../agent/node-object.js';
import type { AgentNodeConfig } from '../agent/agent.js';
import { PodSync, SHUTDOWN_OVERRIDE } from '../agent/pod-sync.js';
import { SimulatedRuntime } from '../agent/runtimes/simulated.js';
import { AgentStateDir } from '../agent/state-dir.js';
import { Informer, objectKeyOf, stripManagedFields } from '../client/informer.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/log.js';
import { actingAs } from './acting-as.js';
import { MemoryPodState } from './memory-pod-state.js';

/** Every Node a fleet registers carries this label, its value the fleet's name prefix. */
export const SIM_LABEL = 'skiff.dev/simulated-by';

/** What every node of a fleet is like: the agent's own node settings, as `skiff agent` takes them. */
export type SimNodeSettings = Pick<
  AgentNodeConfig,
  'cpu' | 'memory' | 'maxPods' | 'labels' | 'taints' | 'reregister' | 'leaseDurationSeconds' | 'statusUpdateFrequencyMs' | 'statusReportFrequencyMs'
  | 'simPodStartDelayMs' | 'simPodStopDelayMs' | 'simStages' | 'restartBackoffBaseMs' | 'restartBackoffMaxMs'
>;

export interface FleetOptions {
  client: ApiClient;
  /** The nodes' Lease renewals and status reports go through this one (the kubelet's heartbeat client); `client` where unset. */
  heartbeatClient?: ApiClient;
  clock: Clock;
  /** The fleet's own log: one line per fleet-wide transition. */
  log: Logger;
  /** Each node's log (its transitions; quiet by default at fleet sizes). */
  nodeLog: Logger;
  dataDir: string;
  namePrefix: string;
  count: number;
  node: SimNodeSettings;
  /** How many nodes register at once. */
  registerConcurrency?: number;
  /** Told as registration progresses: (registered, total). */
  progress?(done: number, total: number): void;
}

class SimNode {
  readonly loops: NodeLoops;
  readonly podSync: PodSync;
  private readiness: Readiness = READY;
  /** Keys of the pods bound to this node, from the fleet's pod watch. */
  readonly podKeys = new Set<string>();
  /**
   * What this node's loops wait on: aborted with the fleet's. Each sleep adds a listener to the
   * signal it waits on and removes it after, and adding one scans the signal's listeners: with
   * every node on the fleet's one signal, 10,000 nodes held 30,000 listeners there and the scans
   * took the fleet's whole core (a fifth of its time at 2,000 nodes).
   */
  readonly signal: AbortSignal;

  constructor(readonly name: string, o: FleetOptions, pods: Informer<Pod>, fleetSignal: AbortSignal, onRetire: (n: SimNode) => void) {
    this.signal = AbortSignal.any([fleetSignal]);
    // A node's pods each wait on it too.
    setMaxListeners(0, this.signal);
    const state = new AgentStateDir(join(o.dataDir, 'nodes', name));
    const api = actingAs(o.client, name);
    const log = o.nodeLog;
    const events = new EventRecorder(api, o.clock, log, name);
    const cfg: NodeConfig = {
      nodeName: name,
      machineId: state.machineId(),
      nodeIP: '127.0.0.1',
      runtime: 'simulated',
      labels: { ...o.node.labels, [SIM_LABEL]: o.namePrefix },
      taints: o.node.taints,
      capacity: simulatedCapacity(o.node),
      kubeletPort: 0,
    };
    this.loops = new NodeLoops({
      api,
      heartbeatApi: o.heartbeatClient ? actingAs(o.heartbeatClient, name) : api,
      clock: o.clock,
      log,
      cfg,
      state,
      events,
      reregister: o.node.reregister,
      leaseDurationSeconds: o.node.leaseDurationSeconds,
      statusUpdateFrequencyMs: o.node.statusUpdateFrequencyMs,
      statusReportFrequencyMs: o.node.statusReportFrequencyMs,
      readiness: () => this.readiness,
      ...(o.node.simStages ? { conditionStages: o.node.simStages.nodes } : {}),
      onRetire: () => onRetire(this),
    });
    this.podSync = new PodSync({
      api,
      clock: o.clock,
      log,
      nodeName: name,
      nodeIP: cfg.nodeIP,
      runtime: new SimulatedRuntime({ clock: o.clock, startDelayMs: o.node.simPodStartDelayMs, stopDelayMs: o.node.simPodStopDelayMs, writeLogs: false, ...(o.node.simStages ? { stages: o.node.simStages.pods } : {}) }),
      state: new MemoryPodState(state.root),
      events,
      backoffBaseMs: o.node.restartBackoffBaseMs,
      backoffMaxMs: o.node.restartBackoffMaxMs,
      allocatable: () => cfg.capacity,
    });
    this.podSync.setDesired(
      (key) => (this.podKeys.has(key) ? pods.get(key) : undefined),
      () => [...this.podKeys],
    );
  }

  /** Leaving gracefully (N6), as an agent does on SIGTERM, by the deadline: not ready, pods stopped, Lease and Node removed. */
  async leave(deadline: number): Promise<boolean> {
    this.readiness = { ready: false, reason: 'KubeletNotReady', message: 'node is shutting down' };
    this.loops.keeper.leave();
    await this.podSync.terminateAll(SHUTDOWN_OVERRIDE, deadline);
    const removed = await this.loops.remove(deadline);
    this.loops.stop();
    return removed;
  }
}

export class Fleet {
  private readonly nodes = new Map<string, SimNode>();
  private readonly abort = new AbortController();
  private readonly loops: Promise<unknown>[] = [];
  private readonly pods: Informer<Pod>;
  private readonly nodeInformer: Informer<Node>;
  private retired = 0;

  constructor(private readonly o: FleetOptions) {
    // The fleet's watches and every node's own signal wait on this one.
    setMaxListeners(0, this.abort.signal);
    this.pods = new Informer<Pod>(o.client, { path: '/api/v1/pods', fieldSelector: 'spec.nodeName!=', clock: o.clock, log: o.log, transform: stripManagedFields });
    this.nodeInformer = new Informer<Node>(o.client, { path: '/api/v1/nodes', labelSelector: `${SIM_LABEL}=${o.namePrefix}`, clock: o.clock, log: o.log, readOnly: true, transform: stripManagedFields });
  }

  /** Node names: <prefix>-1 … <prefix>-N (the index padded, so they sort). */
  static names(prefix: string, count: number): string[] {
    const width = String(count).length;
    return Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(width, '0')}`);
  }

  get size(): number {
    return this.nodes.size;
  }

  node(name: string): SimNode | undefined {
    return this.nodes.get(name);
  }

  /** Registers every node (bounded concurrency), then runs their loops; resolves once all are registered. */
  async start(): Promise<void> {
    const signal = this.abort.signal;
    for (const name of Fleet.names(this.o.namePrefix, this.o.count)) this.nodes.set(name, new SimNode(name, this.o, this.pods, signal, (n) => void this.retire(n)));

    const bound = (p: Pod) => this.nodes.get(p.spec?.nodeName ?? '');
    this.pods.addHandlers({
      add: (p) => {
        const n = bound(p);
        if (!n) return;
        n.podKeys.add(objectKeyOf(p));
        n.podSync.podChanged(p);
      },
      update: (_o, p) => bound(p)?.podSync.podChanged(p),
      delete: (p) => {
        const n = bound(p);
        if (!n) return;
        n.podKeys.delete(objectKeyOf(p));
        n.podSync.podDeleted(p);
      },
    });
    this.nodeInformer.addHandlers({
      add: (n) => this.nodes.get(n.metadata.name!)?.loops.observedNode(n),
      update: (_o, n) => this.nodes.get(n.metadata.name!)?.loops.observedNode(n),
      delete: (n) => this.nodes.get(n.metadata.name!)?.loops.deletedNode(n),
    });
    this.loops.push(this.pods.run(signal), this.nodeInformer.run(signal));
    for (const n of this.nodes.values()) this.loops.push(n.podSync.run(n.signal));
    void this.pods.waitForSync().then(() => {
      for (const n of this.nodes.values()) n.podSync.markSynced();
    });

    const all = [...this.nodes.values()];
    let next = 0;
    let done = 0;
    const worker = async () => {
      while (next < all.length && !signal.aborted) {
        const n = all[next++]!;
        try {
          await n.loops.register(n.signal);
        } catch (e) {
          if (signal.aborted) return;
          this.o.log.error({ node: n.name, err: errorText(e) }, 'a simulated node could not register');
          continue;
        }
        this.loops.push(...n.loops.run(n.signal));
        this.o.progress?.(++done, all.length);
      }
    };
    await Promise.all(Array.from({ length: Math.min(all.length, this.o.registerConcurrency ?? 32) }, worker));
    this.o.log.info({ nodes: done, prefix: this.o.namePrefix }, 'simulated nodes registered');
  }

  /** A node was retired (N5): it leaves and stays out; the rest of the fleet runs on. */
  private async retire(n: SimNode): Promise<void> {
    this.o.log.warn({ node: n.name }, 'simulated node retired: leaving');
    if (!(await n.leave(this.o.clock.now() + 10_000))) this.o.log.error({ node: n.name }, 'could not remove the retired node and its lease from the API before the deadline');
    this.nodes.delete(n.name);
    this.retired++;
  }

  /**
   * Every node leaves gracefully (Lease and Node removed), then the watches stop. One deadline for
   * the whole fleet: with the API unreachable, nodes would otherwise each wait out their own.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    const all = [...this.nodes.values()];
    const deadline = this.o.clock.now() + timeoutMs;
    let next = 0;
    let stuck = 0;
    const worker = async () => {
      while (next < all.length) if (!(await all[next++]!.leave(deadline).catch(() => false))) stuck++;
    };
    await Promise.all(Array.from({ length: Math.min(all.length, 32) }, worker));
    this.abort.abort();
    await Promise.race([Promise.allSettled(this.loops), this.o.clock.sleep(2000)]);
    // One line for the fleet, not one per node.
    if (stuck > 0) this.o.log.error({ nodes: stuck, of: all.length }, 'could not remove every node and lease from the API before the deadline; they stay until the node lifecycle controller or an operator removes them');
    this.o.log.info({ nodes: all.length - stuck, retired: this.retired }, 'simulated nodes left');
  }
}
