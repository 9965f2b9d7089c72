// The cluster as the dashboard shows it, kept live by watches made with the dashboard user's own
// credentials (so RBAC decides what appears): a tile per node, the control plane, workloads,
// recent warnings and a timeline of node states. Changes are collected and handed out as one
// patch at a time, so a burst of 5,000 Lease renewals is one message, and a tile that did not
// change in what it shows is not sent again.
import type { Lease } from '../api/kinds/lease.js';
import type { Node } from '../api/kinds/node.js';
import type { Pod } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import type { KubeList, KubeObject } from '../api/types.js';
import { Informer, objectKeyOf } from '../client/informer.js';
import type { ApiClient } from '../client/rest.js';
import type { TimelineEntry, NodeState } from '../scenarios/timeline.js';
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/log.js';
import { MemberHealth, controlPlaneView, memberAddresses } from './control-plane.js';
import { isMemberLease } from '../server/endpoint-reconciler.js';
import { absentTile, nodeTile, podCountKey, podRow, slimLease, slimPod } from './node-tile.js';
import { timestampMs } from '../api/kinds/printing.js';
import { pruneTimeline } from './live-timeline.js';
import { TIMELINE_WINDOW_MS, type Forbidden, type NamespaceDetail, type NamespaceRow, type NodeTile, type Patch, type PodRow, type Snapshot, type WarningEvent, type WorkloadKind, type WorkloadRow } from './view.js';
import { WORKLOAD_PATHS, workloadRow } from './workload-rows.js';
import { namespaceRows, serviceRow, slimService, type SlimEndpointSlice, type SlimService } from './namespace-rows.js';

export interface ClusterViewOptions {
  client: ApiClient;
  clock: Clock;
  log: Logger;
  /** Something changed: a patch is ready to be taken. */
  changed(): void;
  /** How often members' /readyz is asked. Default 2 s. */
  memberProbeMs?: number;
}

/** An Event as the dashboard keeps it. */
interface SlimEvent extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
  series?: { count?: number; lastObservedTime?: string };
}

function slimEvent(e: SlimEvent): SlimEvent {
  const last = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: e.metadata.name, namespace: e.metadata.namespace, resourceVersion: e.metadata.resourceVersion },
    ...(e.type ? { type: e.type } : {}),
    ...(e.reason ? { reason: e.reason } : {}),
    ...(e.message ? { message: e.message.slice(0, 500) } : {}),
    count: e.series?.count ?? e.count ?? 1,
    involvedObject: { kind: e.involvedObject?.kind, name: e.involvedObject?.name, namespace: e.involvedObject?.namespace },
    ...(last ? { lastTimestamp: last } : {}),
  };
}

const REREGISTERED = 'NodeReregistered';
const WARNINGS_KEPT = 50;
const RENEWAL_WINDOW_MS = 60_000;
const MAX_TIMELINE_ENTRIES = 50_000;

export class ClusterView {
  readonly startedAt: number;
  private readonly informers: Informer<KubeObject>[] = [];
  private readonly nodes: Informer<Node>;
  private readonly leases: Informer<Lease>;
  private readonly systemLeases: Informer<Lease>;
  private readonly endpoints: Informer<KubeObject>;
  private readonly autoscalerStatus: Informer<KubeObject>;
  private readonly workloads = new Map<WorkloadKind, Informer<KubeObject>>();
  private readonly pods: Informer<Pod>;
  private readonly namespaces: Informer<KubeObject>;
  private readonly services: Informer<SlimService>;
  /** The namespace rows as last handed out, to send them again only when they change. */
  private namespacesJson = '';
  private readonly members: MemberHealth;

  /** The tiles as last handed out (absent nodes included). */
  private readonly tiles = new Map<string, NodeTile>();
  private readonly tileJson = new Map<string, string>();
  private readonly dirtyNodes = new Set<string>();
  /**
   * Tiles to hand out before the recomputed ones: a node deleted and re-created within one patch
   * is still told as gone, then back, in that order.
   */
  private transitions: NodeTile[] = [];
  /** When each node came back after it was seen deleted. */
  private readonly returned = new Map<string, number>();
  private readonly podsByNode = new Map<string, Map<string, Pod>>();
  private readonly unscheduled = new Set<string>();
  private unscheduledSent = 0;
  private readonly renewals = new Map<string, number[]>();
  /** NodeReregistered counts by node, by Event. */
  private readonly reregistered = new Map<string, Map<string, number>>();
  private readonly warnings = new Map<string, WarningEvent>();
  private timeline: TimelineEntry[] = [];
  private pendingTimeline: TimelineEntry[] = [];
  private readonly lastNodeState = new Map<string, string>();
  private readonly lastPods = new Map<string, string>();
  private readonly seenNodes = new Set<string>();
  private readonly leaders = new Map<string, string>();
  private forbidden: Forbidden = {};
  private dirty = { controlPlane: false, workloads: false, namespaces: false, warnings: false, forbidden: false, listed: false };
  private synced = false;
  private timer?: ReturnType<typeof setInterval>;

  constructor(private readonly o: ClusterViewOptions) {
    this.startedAt = o.clock.now();
    const log = o.log;
    const informer = <T extends KubeObject>(what: string, path: string, extra: { fieldSelector?: string; transform?: (x: T) => T } = {}): Informer<T> => {
      const inf: Informer<T> = new Informer<T>(o.client, { path, log, ...extra, onError: (e) => this.noteError(what, inf as unknown as Informer<KubeObject>, e) });
      this.informers.push(inf as unknown as Informer<KubeObject>);
      return inf;
    };
    this.nodes = informer<Node>('nodes', '/api/v1/nodes');
    this.nodes.addHandlers({
      add: (n) => this.nodeSeen(n, true),
      update: (_, n) => this.nodeSeen(n, false),
      delete: (n) => this.nodeGone(n),
    });
    this.leases = informer<Lease>('node leases', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { transform: slimLease });
    this.leases.addHandlers({
      add: (l) => this.dirtyNodes.add(l.metadata.name!),
      update: (old, l) => this.leaseRenewed(old, l),
      delete: (l) => this.dirtyNodes.add(l.metadata.name!),
    });
    this.pods = informer<Pod>('pods', '/api/v1/pods', { transform: slimPod });
    this.pods.addHandlers({ add: (p) => this.podChanged(undefined, p), update: (old, p) => this.podChanged(old, p), delete: (p) => this.podChanged(p, undefined) });
    const markNamespaces = () => this.mark('namespaces');
    this.namespaces = informer('namespaces', '/api/v1/namespaces');
    this.namespaces.addHandlers({ add: markNamespaces, update: markNamespaces, delete: markNamespaces });
    this.services = informer<SlimService>('services', '/api/v1/services', { transform: slimService });
    this.services.addHandlers({ add: markNamespaces, update: markNamespaces, delete: markNamespaces });
    const events = informer<SlimEvent>('events', '/api/v1/events', { transform: slimEvent });
    events.addHandlers({ add: (e) => this.eventSeen(undefined, e), update: (old, e) => this.eventSeen(old, e), delete: (e) => this.eventGone(e) });
    this.systemLeases = informer<Lease>('kube-system leases', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', { transform: slimLease });
    this.systemLeases.addHandlers({ add: (l) => this.systemLease(l), update: (_, l) => this.systemLease(l), delete: () => this.markControlPlane() });
    this.endpoints = informer('the kubernetes endpoints', '/api/v1/namespaces/default/endpoints', { fieldSelector: 'metadata.name=kubernetes' });
    this.endpoints.addHandlers({ add: () => this.markControlPlane(), update: () => this.markControlPlane(), delete: () => this.markControlPlane() });
    this.autoscalerStatus = informer('the autoscaler status', '/api/v1/namespaces/kube-system/configmaps', { fieldSelector: 'metadata.name=cluster-autoscaler-status' });
    this.autoscalerStatus.addHandlers({ add: () => this.markControlPlane(), update: () => this.markControlPlane(), delete: () => this.markControlPlane() });
    for (const kind of Object.keys(WORKLOAD_PATHS) as WorkloadKind[]) {
      const p = WORKLOAD_PATHS[kind];
      const inf = informer(p.resource, `/${p.group}/${p.resource}`);
      const mark = () => this.mark('workloads');
      inf.addHandlers({ add: mark, update: mark, delete: mark });
      this.workloads.set(kind, inf);
    }
    this.members = new MemberHealth({ client: o.client, clock: o.clock, log, intervalMs: o.memberProbeMs ?? 2000, changed: () => this.markControlPlane() });
  }

  /** Starts the watches; resolves once each has listed or been refused. */
  async start(signal: AbortSignal): Promise<void> {
    for (const inf of this.informers) void inf.run(signal);
    void this.members.run(signal, () => this.memberAddresses());
    this.timer = setInterval(() => this.age(), 5_000);
    this.timer.unref();
    signal.addEventListener('abort', () => clearInterval(this.timer));
    // A watch the user may not make never syncs: wait for the others, or until it is refused.
    await Promise.all(this.informers.map((inf) => Promise.race([inf.waitForSync(), this.refused(inf, signal)])));
    this.synced = true;
    // Pages that started before this learn that what they show is now what there is.
    this.mark('listed');
  }

  private readonly refusals = new Map<Informer<KubeObject>, () => void>();

  private refused(inf: Informer<KubeObject>, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.refusals.set(inf, resolve);
      signal.addEventListener('abort', () => resolve());
    });
  }

  private noteError(what: string, inf: Informer<KubeObject>, e: unknown): void {
    const before = this.forbidden[what];
    if (e === undefined) delete this.forbidden[what];
    else if (isStatusError(e) && (e.status.code === 403 || e.status.code === 401)) {
      this.forbidden[what] = e.status.message ?? errorText(e);
      // The informer keeps trying (RBAC may change); the page starts without it.
      this.refusals.get(inf)?.();
    } else {
      this.o.log.debug({ what, err: errorText(e) }, 'watch failed; retrying');
      return;
    }
    if (before !== this.forbidden[what]) this.mark('forbidden');
  }

  private mark(what: keyof ClusterView['dirty']): void {
    this.dirty[what] = true;
    this.o.changed();
  }

  private markControlPlane(): void {
    this.mark('controlPlane');
  }

  private t(): number {
    return this.o.clock.now() - this.startedAt;
  }

  private record(e: TimelineEntry): void {
    this.pendingTimeline.push(e);
  }

  // ---- nodes ----

  private nodeSeen(n: Node, added: boolean): void {
    const name = n.metadata.name!;
    if (added) {
      this.record({ t: this.t(), kind: 'node-registered', node: name, uid: n.metadata.uid ?? '', again: this.seenNodes.has(name) });
      this.seenNodes.add(name);
      if (this.tiles.get(name)?.health === 'absent') this.returned.set(name, this.o.clock.now());
    }
    this.dirtyNodes.add(name);
    this.o.changed();
  }

  private nodeGone(n: Node): void {
    const name = n.metadata.name!;
    this.record({ t: this.t(), kind: 'node-deleted', node: name, uid: n.metadata.uid ?? '' });
    const last = this.tiles.get(name);
    if (last && last.health !== 'absent') this.publish(absentTile(last, this.o.clock.now()), this.transitions);
    this.dirtyNodes.add(name);
    this.o.changed();
  }

  /** Makes `tile` the one handed out (unless it says what the last one said), recording its changes. */
  private publish(tile: NodeTile, out: NodeTile[]): void {
    const json = JSON.stringify(tile);
    if (this.tileJson.get(tile.name) === json) return;
    this.tileJson.set(tile.name, json);
    this.tiles.set(tile.name, tile);
    out.push(tile);
    this.recordTile(tile);
  }

  private leaseRenewed(old: Lease, l: Lease): void {
    const name = l.metadata.name!;
    if (old.spec?.renewTime !== l.spec?.renewTime) {
      let list = this.renewals.get(name);
      if (!list) this.renewals.set(name, (list = []));
      list.push(this.o.clock.now());
    }
    this.dirtyNodes.add(name);
    this.o.changed();
  }

  private podChanged(old: Pod | undefined, p: Pod | undefined): void {
    const key = objectKeyOf((p ?? old)!);
    const oldNode = old?.spec?.nodeName;
    const node = p?.spec?.nodeName;
    if (oldNode && oldNode !== node) {
      this.podsByNode.get(oldNode)?.delete(key);
      this.dirtyNodes.add(oldNode);
    }
    if (p && node) {
      let m = this.podsByNode.get(node);
      if (!m) this.podsByNode.set(node, (m = new Map()));
      m.set(key, p);
      this.dirtyNodes.add(node);
    } else if (!p && oldNode) {
      this.podsByNode.get(oldNode)?.delete(key);
    }
    const waiting = p !== undefined && !node && !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
    if (waiting) this.unscheduled.add(key);
    else this.unscheduled.delete(key);
    // The namespace rows count pods by phase: most pod updates (readiness, restarts) leave them be.
    if (!old || !p || podCountKey(old) !== podCountKey(p)) this.dirty.namespaces = true;
    this.o.changed();
  }

  /** The pods bound to a node (as kept: slim). */
  podsBoundTo(node: string): Pod[] {
    return [...(this.podsByNode.get(node)?.values() ?? [])];
  }

  /**
   * A namespace's pods (with their nodes) and Services, for its panel. Its EndpointSlices are read
   * when the panel asks, not watched: they change with every pod's readiness, and only an open
   * panel shows them.
   */
  async namespaceDetail(namespace: string): Promise<NamespaceDetail> {
    const pods = this.pods
      .list()
      .filter((p) => p.metadata.namespace === namespace)
      .map((p) => ({ ...podRow(p), ...(p.spec?.nodeName ? { node: p.spec.nodeName } : {}) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const slices = await this.o.client.get<KubeList<SlimEndpointSlice>>(`/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`).then(
      (l) => l.items,
      (e: unknown) => {
        if (isStatusError(e) && (e.status.code === 403 || e.status.code === 401)) return undefined;
        throw e;
      },
    );
    const services = this.services
      .list()
      .filter((s) => s.metadata.namespace === namespace)
      .map((s) => serviceRow(s, slices))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { pods, services };
  }

  /** The pods bound to a node, for its panel. */
  podsOn(node: string): PodRow[] {
    return this.podsBoundTo(node).map(podRow).sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  }

  // ---- events ----

  /** Only Warnings and Events about Nodes show: the rest (most of a busy cluster's) are let go unseen. */
  private eventSeen(old: SlimEvent | undefined, e: SlimEvent): void {
    const aboutNode = e.involvedObject?.kind === 'Node';
    if (e.type !== 'Warning' && !aboutNode) return;
    const key = objectKeyOf(e);
    const about = `${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}`;
    if (e.reason === REREGISTERED && aboutNode && e.involvedObject?.name) {
      const node = e.involvedObject.name;
      let m = this.reregistered.get(node);
      if (!m) this.reregistered.set(node, (m = new Map()));
      m.set(key, e.count ?? 1);
      this.dirtyNodes.add(node);
    }
    if (e.type === 'Warning') {
      this.warnings.set(key, { id: key, at: timestampMs(e.lastTimestamp) ?? this.o.clock.now(), reason: e.reason ?? '', object: about, message: e.message ?? '', count: e.count ?? 1 });
      if (this.warnings.size > WARNINGS_KEPT * 2) this.trimWarnings();
      this.dirty.warnings = true;
    }
    // Markers on the timeline for what happens while the page watches (not the past it listed).
    const repeated = old !== undefined && (e.count ?? 1) > (old.count ?? 1);
    if (this.synced && (old === undefined || repeated)) {
      this.record({ t: this.t(), kind: 'event', type: e.type ?? 'Normal', reason: e.reason ?? '', object: about, message: e.message ?? '' });
    }
    this.o.changed();
  }

  private eventGone(e: SlimEvent): void {
    const key = objectKeyOf(e);
    if (e.involvedObject?.kind === 'Node' && e.involvedObject.name && this.reregistered.get(e.involvedObject.name)?.delete(key)) this.dirtyNodes.add(e.involvedObject.name);
    if (this.warnings.delete(key)) this.mark('warnings');
  }

  private trimWarnings(): void {
    const newest = [...this.warnings.values()].sort((a, b) => b.at - a.at).slice(0, WARNINGS_KEPT);
    this.warnings.clear();
    for (const w of newest) this.warnings.set(w.id, w);
  }

  // ---- control plane ----

  private systemLease(l: Lease): void {
    if (!isMemberLease(l)) {
      const holder = l.spec?.holderIdentity ?? '';
      if (this.leaders.get(l.metadata.name!) !== holder) {
        this.leaders.set(l.metadata.name!, holder);
        this.record({ t: this.t(), kind: 'leader', lease: l.metadata.name!, holder });
      }
    }
    this.markControlPlane();
  }

  private memberAddresses(): string[] {
    return memberAddresses(this.endpoints.list(), this.systemLeases.list());
  }

  // ---- time passing ----

  /** Renewal rates decay, absent nodes and old timeline entries age out. */
  private age(): void {
    const now = this.o.clock.now();
    for (const [name, list] of this.renewals) {
      const fresh = list.filter((t) => now - t < RENEWAL_WINDOW_MS);
      if (fresh.length !== list.length) {
        this.dirtyNodes.add(name);
        if (fresh.length === 0) this.renewals.delete(name);
        else this.renewals.set(name, fresh);
      }
    }
    for (const [name, tile] of this.tiles) if (tile.health === 'absent' && now - (tile.absentSince ?? now) > TIMELINE_WINDOW_MS) this.dirtyNodes.add(name);
    this.timeline = pruneTimeline(this.timeline, this.t() - TIMELINE_WINDOW_MS, MAX_TIMELINE_ENTRIES);
    if (this.dirtyNodes.size > 0) this.o.changed();
  }

  // ---- what the page gets ----

  private tileFor(name: string, now: number): NodeTile | undefined {
    const node = this.nodes.get(name);
    if (!node) {
      const last = this.tiles.get(name);
      if (!last) return undefined;
      if (last.health === 'absent') return now - (last.absentSince ?? now) > TIMELINE_WINDOW_MS ? undefined : last;
      return absentTile(last, now);
    }
    let rereg = 0;
    for (const c of this.reregistered.get(name)?.values() ?? []) rereg += c;
    const returnedAt = this.returned.get(name);
    if (returnedAt !== undefined && now - returnedAt > TIMELINE_WINDOW_MS) this.returned.delete(name);
    const tile = nodeTile({
      node,
      ...(this.leases.get(`kube-node-lease/${name}`) ? { lease: this.leases.get(`kube-node-lease/${name}`)! } : {}),
      pods: this.podsByNode.get(name)?.values() ?? [],
      renewalsPerMinute: (this.renewals.get(name) ?? []).filter((t) => now - t < RENEWAL_WINDOW_MS).length,
      reregistrations: rereg,
    });
    return returnedAt === undefined ? tile : { ...tile, returnedAt };
  }

  /** The timeline entries a changed tile adds: its state, and its pods by phase. */
  private recordTile(tile: NodeTile): void {
    const state: NodeState = tile.health;
    const stateKey = `${state}|${tile.taints.join(',')}|${tile.cordoned}`;
    if (this.lastNodeState.get(tile.name) !== stateKey) {
      this.lastNodeState.set(tile.name, stateKey);
      this.record({ t: this.t(), kind: 'node-state', node: tile.name, state, taints: tile.taints.map((x) => x.replace(/=[^:]*:/, ':')), unschedulable: tile.cordoned });
    }
    const podsKey = `${tile.pods.running}|${tile.pods.pending}|${tile.pods.terminating}`;
    if (this.lastPods.get(tile.name) !== podsKey) {
      this.lastPods.set(tile.name, podsKey);
      this.record({ t: this.t(), kind: 'pods', node: tile.name, running: tile.pods.running, pending: tile.pods.pending, terminating: tile.pods.terminating });
    }
  }

  /** What changed since the last patch (undefined: nothing the page would show). */
  takePatch(): Patch | undefined {
    const now = this.o.clock.now();
    const patch: Patch = { type: 'patch', now };
    const changed: NodeTile[] = this.transitions;
    this.transitions = [];
    const removed: string[] = [];
    for (const name of this.dirtyNodes) {
      const tile = this.tileFor(name, now);
      if (!tile) {
        if (this.tiles.delete(name)) removed.push(name);
        this.tileJson.delete(name);
        this.lastNodeState.delete(name);
        this.lastPods.delete(name);
        this.returned.delete(name);
        continue;
      }
      this.publish(tile, changed);
    }
    this.dirtyNodes.clear();
    if (changed.length) patch.nodes = changed;
    if (removed.length) patch.removed = removed;
    if (this.unscheduled.size !== this.unscheduledSent) {
      this.unscheduledSent = this.unscheduled.size;
      patch.unscheduled = this.unscheduledSent;
      this.record({ t: this.t(), kind: 'unscheduled', count: this.unscheduledSent });
    }
    if (this.dirty.controlPlane) patch.controlPlane = this.controlPlane();
    if (this.dirty.workloads) patch.workloads = this.workloadRows();
    if (this.dirty.namespaces) {
      // Pods change all the time; their namespaces' counts much less often.
      const rows = this.namespaceRows();
      const json = JSON.stringify(rows);
      if (json !== this.namespacesJson) {
        this.namespacesJson = json;
        patch.namespaces = rows;
      }
    }
    if (this.dirty.warnings) patch.warnings = this.warningRows();
    if (this.dirty.forbidden) patch.forbidden = { ...this.forbidden };
    if (this.dirty.listed) patch.listed = this.synced;
    this.dirty = { controlPlane: false, workloads: false, namespaces: false, warnings: false, forbidden: false, listed: false };
    if (this.pendingTimeline.length) {
      patch.timeline = this.pendingTimeline;
      this.timeline.push(...this.pendingTimeline);
      this.pendingTimeline = [];
    }
    return Object.keys(patch).length > 2 ? patch : undefined;
  }

  /**
   * Everything, as of the last patch: the server hands out pending changes first, so a page that
   * joins now and the patches after it add up to the same view as every other page's.
   */
  snapshot(server: string, user: string): Snapshot {
    return {
      type: 'snapshot',
      now: this.o.clock.now(),
      server,
      user,
      startedAt: this.startedAt,
      listed: this.synced,
      nodes: [...this.tiles.values()],
      unscheduled: this.unscheduledSent,
      controlPlane: this.controlPlane(),
      workloads: this.workloadRows(),
      namespaces: this.namespaceRows(),
      warnings: this.warningRows(),
      timeline: this.timeline,
      forbidden: { ...this.forbidden },
    };
  }

  private controlPlane() {
    return controlPlaneView(this.endpoints.list(), this.systemLeases.list(), this.members.results, this.autoscalerStatus.list()[0]);
  }

  private workloadRows(): WorkloadRow[] {
    const rows: WorkloadRow[] = [];
    for (const [kind, inf] of this.workloads) for (const o of inf.list()) rows.push(workloadRow(kind, o));
    return rows.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  }

  private namespaceRows(): NamespaceRow[] {
    return namespaceRows(this.namespaces.list(), this.pods.list(), this.services.list());
  }

  private warningRows(): WarningEvent[] {
    return [...this.warnings.values()].sort((a, b) => b.at - a.at).slice(0, WARNINGS_KEPT);
  }
}
