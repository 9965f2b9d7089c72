// The self-healing Node (N3). The agent treats its Node like any desired-state object: it watches
// it (fieldSelector metadata.name=<node>), persists the operator-owned fields on every observed
// change, and when the Node is gone — a DELETED event, or a 404 seen by the Lease or status loop,
// always confirmed by a live GET, never inferred from a cache miss — it re-creates it with those
// fields, re-creates the Lease owned by the new Node, records a NodeReregistered Event and logs one
// line per transition. In classic mode (N13) it does none of that, as the upstream kubelet.
import type { Node } from '../api/kinds/node.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi, RETIRE_ANNOTATION, isNotFound, nodePath } from './api.js';
import { errorText } from '../util/error-text.js';
import type { EventRecorder } from './events.js';
import { initialNode, observe, sameObserved, type NodeConfig } from './node-object.js';
import { createOrAdoptNode, NodeNameTakenError } from './registration.js';
import type { ObservedNode, ObservedNodeStore } from './state-dir.js';
import type { NodeStatus } from '../api/kinds/node.js';
import { Backoff } from './wake.js';
import { SHUTDOWN_CORDON_ANNOTATION } from './drain.js';

export type NodeKeeperState = 'unregistered' | 'registered' | 'missing' | 'leaving';

export interface NodeKeeperOptions {
  api: AgentApi;
  clock: Clock;
  log: Logger;
  cfg: NodeConfig;
  state: ObservedNodeStore;
  events: EventRecorder;
  /** false = classic mode: never re-create (N13). */
  reregister: boolean;
  /** The status to register with. */
  initialStatus(now: number): NodeStatus;
  /** The Node was (re-)created or its UID changed: the Lease and status must follow. */
  onNodeChanged?(node: Node): void;
  /** The Node carries skiff.dev/retire=true (N5). */
  onRetire?(node: Node): void;
  /** Back-off between failed re-creations (ms). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

export class NodeKeeper {
  private node?: Node;
  private _state: NodeKeeperState = 'unregistered';
  private frozen = false;
  private observed?: ObservedNode;
  private checking?: Promise<void>;
  private recheck = false;
  private retireSignalled = false;
  /** Re-creations done, for tests and benchmarks. */
  reregistrations = 0;

  constructor(private readonly o: NodeKeeperOptions) {
    this.observed = o.state.readObservedNode(o.cfg.nodeName);
  }

  get state(): NodeKeeperState {
    return this._state;
  }

  get uid(): string | undefined {
    return this._state === 'registered' ? this.node?.metadata.uid : undefined;
  }

  get current(): Node | undefined {
    return this.node;
  }

  /** Registers at start, retrying with back-off (100 ms doubling to 7 s, as the kubelet) until it lands. */
  async register(signal: AbortSignal): Promise<Node> {
    const backoff = new Backoff(100, 7000);
    let loggedFailure = false;
    for (;;) {
      if (signal.aborted) throw new Error('aborted');
      try {
        const desired = initialNode(this.o.cfg, this.observed, this.o.initialStatus(this.o.clock.now()));
        const r = await createOrAdoptNode(this.o.api, this.o.clock, this.o.log, this.o.cfg, desired);
        if (r.node.metadata.annotations?.[SHUTDOWN_CORDON_ANNOTATION] !== undefined) {
          // Our own shutdown cordoned it and could not remove it: undo that, not an operator's cordon.
          r.node = await this.o.api.patch<Node>(`/api/v1/nodes/${encodeURIComponent(this.o.cfg.nodeName)}`, { metadata: { annotations: { [SHUTDOWN_CORDON_ANNOTATION]: null } }, spec: { unschedulable: null } }, 'merge');
          this.o.log.info({ node: this.o.cfg.nodeName }, 'uncordoned the node its last shutdown had cordoned');
        }
        this.adopt(r.node);
        this.o.log.info({ node: this.o.cfg.nodeName, uid: r.node.metadata.uid, created: r.created }, r.created ? 'node registered' : 'node was previously registered; using it');
        return r.node;
      } catch (e) {
        if (e instanceof NodeNameTakenError) throw e;
        if (!loggedFailure) {
          loggedFailure = true;
          this.o.log.warn({ node: this.o.cfg.nodeName, err: errorText(e) }, 'unable to register node; retrying with back-off');
        }
        await this.o.clock.sleep(backoff.next(), signal).catch(() => {});
      }
    }
  }

  private adopt(node: Node): void {
    const changed = node.metadata.uid !== this.node?.metadata.uid;
    this.node = node;
    if (this._state !== 'leaving') this._state = 'registered';
    this.persist(node);
    if (changed) this.o.onNodeChanged?.(node);
    this.checkRetire(node);
  }

  private persist(node: Node): void {
    if (this.frozen) return;
    const o = observe(node, this.o.clock.now());
    if (sameObserved(this.observed, o)) return;
    this.observed = o;
    try {
      this.o.state.writeObservedNode(o);
    } catch (e) {
      this.o.log.warn({ err: errorText(e) }, 'could not persist the observed node');
    }
  }

  private checkRetire(node: Node): void {
    if (node.metadata.annotations?.[RETIRE_ANNOTATION] === 'true' && !this.retireSignalled) {
      this.retireSignalled = true;
      this.o.onRetire?.(node);
    }
  }

  /** From the watch on the Node (ADDED / MODIFIED). */
  observedNode(node: Node): void {
    if (node.metadata.name !== this.o.cfg.nodeName) return;
    if (this._state === 'missing' || this._state === 'unregistered') {
      if (this._state === 'missing') this.o.log.info({ node: this.o.cfg.nodeName, uid: node.metadata.uid }, 'node is back in the API');
    }
    this.adopt(node);
  }

  /** From the watch on the Node (DELETED): confirmed by a live GET before anything is done. */
  deletedNode(node: Node): void {
    if (node.metadata.name !== this.o.cfg.nodeName) return;
    this.check('watch');
  }

  /** Stop persisting what is observed (the agent is about to cordon and remove its own Node). */
  freeze(): void {
    this.frozen = true;
  }

  /** No more re-registration: the agent is leaving (graceful exit or retirement). */
  leave(): void {
    this.freeze();
    this._state = 'leaving';
  }

  /**
   * Something saw a 404 (or a DELETED event): confirm with a live GET and re-create if needed.
   * Single-flight: concurrent reports coalesce into one check (plus one re-check).
   */
  check(source: string): Promise<void> {
    if (this.checking) {
      this.recheck = true;
      return this.checking;
    }
    this.checking = (async () => {
      try {
        do {
          this.recheck = false;
          await this.checkOnce(source);
        } while (this.recheck && this._state !== 'leaving');
      } finally {
        this.checking = undefined;
      }
    })();
    return this.checking;
  }

  private async checkOnce(source: string): Promise<void> {
    if (this._state === 'leaving' || this._state === 'unregistered') return;
    const detectedAt = this.o.clock.now();
    try {
      const live = await this.o.api.get<Node>(nodePath(this.o.cfg.nodeName));
      if (this._state === 'missing') this.o.log.info({ node: this.o.cfg.nodeName, uid: live.metadata.uid }, 'node is back in the API');
      this.adopt(live);
      return;
    } catch (e) {
      if (!isNotFound(e)) {
        // Not an answer about the Node (API unreachable, 5xx): nothing is concluded from it.
        this.o.log.debug({ source, err: errorText(e) }, 'could not confirm the node; will check again');
        return;
      }
    }
    if (!this.o.reregister) {
      // Classic mode: the Node stays gone; the status loop logs its errors as upstream does.
      this._state = 'missing';
      return;
    }
    if (this._state !== 'missing') {
      this._state = 'missing';
      this.o.log.warn({ node: this.o.cfg.nodeName, source }, 'node deleted from the API; re-registering');
    }
    await this.recreate(detectedAt);
  }

  private async recreate(detectedAt: number): Promise<void> {
    const backoff = new Backoff(this.o.retryBaseMs ?? 100, this.o.retryMaxMs ?? 2000);
    let loggedFailure = false;
    while (this._state === 'missing') {
      try {
        const desired = initialNode(this.o.cfg, this.observed, this.o.initialStatus(this.o.clock.now()));
        const r = await createOrAdoptNode(this.o.api, this.o.clock, this.o.log, this.o.cfg, desired);
        if ((this._state as NodeKeeperState) === 'leaving') return;
        this.reregistrations++;
        this.adopt(r.node);
        this.o.log.info({ node: this.o.cfg.nodeName, uid: r.node.metadata.uid, ms: this.o.clock.now() - detectedAt }, 'node re-registered');
        void this.o.events.node('NodeReregistered', `Node ${this.o.cfg.nodeName} was deleted from the API while its agent ran; the agent re-created it with its last observed labels, annotations, taints and unschedulable`);
        return;
      } catch (e) {
        if (e instanceof NodeNameTakenError) {
          // Another machine registered the name meanwhile and is alive: stand down, loudly, once.
          this.o.log.error({ node: this.o.cfg.nodeName, err: e.message }, 'cannot re-register node');
          return;
        }
        if (!loggedFailure) {
          loggedFailure = true;
          this.o.log.warn({ node: this.o.cfg.nodeName, err: errorText(e) }, 'node re-registration failing; retrying with back-off');
        }
        await this.o.clock.sleep(backoff.next()).catch(() => {});
      }
    }
  }
}
