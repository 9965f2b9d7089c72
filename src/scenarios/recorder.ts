// Writes a run's timeline as it happens: watches on Nodes, pods, Leases and Events (through an
// admin client that fails over among the members, so losing one costs no record), and the JSON log
// lines of every process, read from their files as they grow. Each entry is stamped when it
// happened: log lines by their own time, API changes when the watch delivers them.
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import type { KubeObject } from '../api/types.js';
import { nodeReadyState, type Node } from '../api/kinds/node.js';
import type { Pod } from '../api/kinds/pod.js';
import { RETIRE_ANNOTATION } from '../agent/api.js';
import { Informer } from '../client/informer.js';
import type { ApiClient } from '../client/rest.js';
import type { Instance } from '../cloud/api.js';
import { silentLogger } from '../util/log.js';
import { isMemberLease, membersByControllerIdentity } from '../server/endpoint-reconciler.js';
import type { NodeState, TimelineEntry } from './timeline.js';

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

function podNode(p: Pod): string | undefined {
  return p.spec?.nodeName || undefined;
}

interface LogSource {
  process: string;
  file: string;
  offset: number;
  rest: string;
}

export class Recorder {
  readonly entries: TimelineEntry[] = [];
  private readonly abort = new AbortController();
  private readonly seenNodes = new Set<string>();
  private readonly nodeLast = new Map<string, string>();
  private readonly podCounts = new Map<string, string>();
  private readonly logs: LogSource[] = [];
  private logTimer?: NodeJS.Timeout;
  private cloudTimer?: NodeJS.Timeout;
  private pods?: Informer<Pod>;
  /** Nodes with a Node object now. */
  private readonly present = new Set<string>();
  /** The cloud's state of each node's instance, as last polled. */
  private readonly instances = new Map<string, { id: string; state: string }>();

  constructor(
    private readonly api: ApiClient,
    /** Wall-clock ms of t = 0. */
    readonly startMs: number,
    logFiles: { process: string; file: string }[],
  ) {
    for (const l of logFiles) this.logs.push({ ...l, offset: 0, rest: '' });
  }

  now(): number {
    return Date.now() - this.startMs;
  }

  add(e: TimelineEntry): void {
    this.entries.push(e);
  }

  /** Starts the watches and the log readers; resolves once the watches have listed. */
  async start(): Promise<void> {
    const log = silentLogger();
    const signal = this.abort.signal;
    const nodes = new Informer<Node>(this.api, { path: '/api/v1/nodes', log });
    nodes.addHandlers({
      add: (n) => {
        const name = n.metadata.name!;
        this.add({ t: this.now(), kind: 'node-registered', node: name, uid: n.metadata.uid ?? '', again: this.seenNodes.has(name) });
        this.seenNodes.add(name);
        this.present.add(name);
        this.nodeChanged(n);
      },
      update: (_, n) => this.nodeChanged(n),
      delete: (n) => {
        const name = n.metadata.name!;
        const t = this.now();
        this.add({ t, kind: 'node-deleted', node: name, uid: n.metadata.uid ?? '' });
        const retired = n.metadata.annotations?.[RETIRE_ANNOTATION] !== undefined;
        this.present.delete(name);
        const state = retired ? 'retired' : this.absentState(name);
        this.nodeLast.set(name, `off:${state}`);
        this.add({ t, kind: 'node-state', node: name, state, taints: [], unschedulable: false });
      },
    });
    const pods = new Informer<Pod>(this.api, { path: '/api/v1/pods', log });
    this.pods = pods;
    pods.addHandlers({
      add: (p) => {
        this.add({ t: this.now(), kind: 'pod-created', pod: `${p.metadata.namespace}/${p.metadata.name}`, uid: p.metadata.uid ?? '' });
        this.countPods(podNode(p));
      },
      update: (old, p) => {
        if (!old.metadata.deletionTimestamp && p.metadata.deletionTimestamp) {
          const node = podNode(p);
          this.add({ t: this.now(), kind: 'pod-terminating', pod: `${p.metadata.namespace}/${p.metadata.name}`, uid: p.metadata.uid ?? '', ...(node ? { node } : {}) });
        }
        this.countPods(podNode(old));
        if (podNode(old) !== podNode(p)) this.countPods(podNode(p));
      },
      delete: (p) => {
        const node = podNode(p);
        this.add({ t: this.now(), kind: 'pod-deleted', pod: `${p.metadata.namespace}/${p.metadata.name}`, uid: p.metadata.uid ?? '', ...(node ? { node } : {}) });
        this.countPods(node);
      },
    });
    const leases = new Informer<KubeObject>(this.api, { path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', log });
    leases.addHandlers({ update: (_, l) => this.add({ t: this.now(), kind: 'lease', node: l.metadata.name! }) });
    const holders = new Map<string, string>();
    const leaders = new Informer<KubeObject & { spec?: { holderIdentity?: string } }>(this.api, { path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', log });
    const leader = (l: KubeObject & { spec?: { holderIdentity?: string } }) => {
      // Members' endpoint Leases are no leader election; they say which member an identity is.
      if (isMemberLease(l)) return;
      const holder = l.spec?.holderIdentity ?? '';
      if (holders.get(l.metadata.name!) === holder) return;
      holders.set(l.metadata.name!, holder);
      const member = holder ? membersByControllerIdentity(leaders.list()).get(holder) : undefined;
      this.add({ t: this.now(), kind: 'leader', lease: l.metadata.name!, holder, ...(member ? { member } : {}) });
    };
    leaders.addHandlers({ add: leader, update: (_, l) => leader(l) });
    const events = new Informer<KubeObject & { type?: string; reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } }>(this.api, { path: '/api/v1/events', log });
    events.addHandlers({
      add: (e) => this.add({ t: this.now(), kind: 'event', type: e.type ?? 'Normal', reason: e.reason ?? '', object: `${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}`, message: e.message ?? '' }),
    });
    const all = [nodes, pods, leases, leaders, events];
    for (const inf of all) void inf.run(signal);
    this.logTimer = setInterval(() => this.readLogs(), 250);
    await Promise.all(all.map((i) => i.waitForSync()));
  }

  /**
   * Polls a cloud's instances (a cloud API has no watch): each instance's state by the node it
   * runs, and a node without its Node object whose machine runs becomes a zombie on the timeline.
   * `logOf` names an instance's agent log, read from its first sighting on.
   */
  watchCloud(list: () => Promise<Instance[]>, logOf: (i: Instance) => string, everyMs = 250): void {
    let busy = false;
    const poll = async () => {
      if (busy) return;
      busy = true;
      try {
        const now = await list();
        const seen = new Set<string>();
        for (const i of now) {
          seen.add(i.nodeName);
          const last = this.instances.get(i.nodeName);
          if (!last) this.logs.push({ process: i.nodeName, file: logOf(i), offset: 0, rest: '' });
          if (last?.id === i.id && last.state === i.state) continue;
          this.instances.set(i.nodeName, { id: i.id, state: i.state });
          this.add({ t: this.now(), kind: 'instance', node: i.nodeName, instance: i.id, state: i.state });
          this.instanceChanged(i.nodeName);
        }
        for (const [node, last] of this.instances) {
          if (seen.has(node) || last.state === 'gone') continue;
          this.instances.set(node, { id: last.id, state: 'gone' });
          this.add({ t: this.now(), kind: 'instance', node, instance: last.id, state: 'gone' });
          this.instanceChanged(node);
        }
      } catch {
        /* the cloud did not answer this time; the next poll sees what changed */
      } finally {
        busy = false;
      }
    };
    void poll();
    this.cloudTimer = setInterval(() => void poll(), everyMs);
  }

  /** A node with no Node object: a zombie while its machine runs, else absent. */
  private absentState(node: string): NodeState {
    return this.instances.get(node)?.state === 'Running' ? 'zombie' : 'absent';
  }

  private instanceChanged(node: string): void {
    // Before its first Node a machine is booting, not a zombie: the row starts when it registers.
    if (this.present.has(node) || !this.seenNodes.has(node)) return;
    const state = this.absentState(node);
    const key = `off:${state}`;
    if (this.nodeLast.get(node) === key) return;
    this.nodeLast.set(node, key);
    this.add({ t: this.now(), kind: 'node-state', node, state, taints: [], unschedulable: false });
  }

  private nodeChanged(n: Node): void {
    const name = n.metadata.name!;
    const state: NodeState = nodeReadyState(n);
    const taints = (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
    const unschedulable = n.spec?.unschedulable === true;
    const key = JSON.stringify([state, taints, unschedulable]);
    if (this.nodeLast.get(name) === key) return;
    this.nodeLast.set(name, key);
    this.add({ t: this.now(), kind: 'node-state', node: name, state, taints, unschedulable });
  }

  private lastUnscheduled = 0;

  private countUnscheduled(): void {
    let n = 0;
    for (const p of this.pods?.list() ?? []) if (!podNode(p) && !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') n++;
    if (n === this.lastUnscheduled) return;
    this.lastUnscheduled = n;
    this.add({ t: this.now(), kind: 'unscheduled', count: n });
  }

  private countPods(node: string | undefined): void {
    if (!node) this.countUnscheduled();
    if (!node || !this.pods) return;
    let running = 0;
    let pending = 0;
    let terminating = 0;
    for (const p of this.pods.list()) {
      if (podNode(p) !== node) continue;
      if (p.metadata.deletionTimestamp) terminating++;
      else if (p.status?.phase === 'Running') running++;
      else if (p.status?.phase === 'Pending' || !p.status?.phase) pending++;
    }
    const key = `${running}/${pending}/${terminating}`;
    if (this.podCounts.get(node) === key) return;
    this.podCounts.set(node, key);
    this.add({ t: this.now(), kind: 'pods', node, running, pending, terminating });
  }

  /** Running pods by node, now. */
  runningPods(): Map<string, number> {
    const out = new Map<string, number>();
    for (const p of this.pods?.list() ?? []) {
      const n = podNode(p);
      if (n && p.status?.phase === 'Running' && !p.metadata.deletionTimestamp) out.set(n, (out.get(n) ?? 0) + 1);
    }
    return out;
  }

  private readLogs(): void {
    for (const l of this.logs) {
      if (!existsSync(l.file)) continue;
      const size = statSync(l.file).size;
      if (size <= l.offset) continue;
      const fd = openSync(l.file, 'r');
      try {
        const buf = Buffer.alloc(size - l.offset);
        readSync(fd, buf, 0, buf.length, l.offset);
        l.offset = size;
        const lines = (l.rest + buf.toString('utf8')).split('\n');
        l.rest = lines.pop() ?? '';
        for (const line of lines) this.logLine(l.process, line);
      } finally {
        closeSync(fd);
      }
    }
  }

  private logLine(process: string, line: string): void {
    if (!line.startsWith('{')) return;
    try {
      const j = JSON.parse(line) as { time?: string | number; level?: number; msg?: string };
      const at = typeof j.time === 'number' ? j.time : Date.parse(j.time ?? '');
      this.add({ t: (Number.isFinite(at) ? at : Date.now()) - this.startMs, kind: 'log', process, level: LEVELS[j.level ?? 30] ?? 'info', msg: j.msg ?? '' });
    } catch {
      /* a torn or foreign line */
    }
  }

  /** Stops watching and reads what the logs still hold; the entries come back in time order. */
  stop(): TimelineEntry[] {
    this.abort.abort();
    if (this.logTimer) clearInterval(this.logTimer);
    if (this.cloudTimer) clearInterval(this.cloudTimer);
    this.readLogs();
    return this.entries.sort((a, b) => a.t - b.t);
  }
}
