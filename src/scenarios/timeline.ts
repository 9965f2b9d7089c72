// What a scenario run records, as data: every entry stamped with milliseconds since the run
// started. The recorder (./recorder.ts) writes it from watches and the processes' logs, the
// expectations (./expectations.ts) read it, and the report (./report.ts) draws it; `--json` writes
// it as is, for machines.

/**
 * A node as the timeline shows it: its Ready condition, or why it has none. `zombie`: no Node
 * object while the cloud instance behind it runs (a machine paid for that the cluster cannot see).
 */
export type NodeState = 'Ready' | 'NotReady' | 'Unknown' | 'absent' | 'retired' | 'zombie';

export type Mode = 'skiff' | 'kubernetes';

export type TimelineEntry =
  /** The node's state or taints changed (also its first sighting). `taints` as key:Effect. */
  | { t: number; kind: 'node-state'; node: string; state: NodeState; taints: string[]; unschedulable: boolean }
  /** A Node object was created; `again` when one of that name existed earlier in the run. */
  | { t: number; kind: 'node-registered'; node: string; uid: string; again: boolean }
  | { t: number; kind: 'node-deleted'; node: string; uid: string }
  /** The pods bound to a node, by phase, whenever the counts change. */
  | { t: number; kind: 'pods'; node: string; running: number; pending: number; terminating: number }
  /** Pods no node has been found for (not bound, not finished), whenever the count changes. */
  | { t: number; kind: 'unscheduled'; count: number }
  /** A pod left the API; `node` is where it was bound. */
  | { t: number; kind: 'pod-deleted'; pod: string; node?: string; uid: string }
  | { t: number; kind: 'pod-created'; pod: string; uid: string }
  /** A pod was marked for deletion (evicted, drained, deleted with a grace period) while bound to `node`. */
  | { t: number; kind: 'pod-terminating'; pod: string; node?: string; uid: string }
  /** A node's Lease was renewed. */
  | { t: number; kind: 'lease'; node: string }
  | { t: number; kind: 'event'; type: string; reason: string; object: string; message: string }
  /** Who holds a leader-election Lease in kube-system. */
  | { t: number; kind: 'leader'; lease: string; holder: string; member?: string }
  /** A line a process logged (server or agent), with its level and message. */
  | { t: number; kind: 'log'; process: string; level: string; msg: string }
  /** A cloud instance's state as the cloud lists it (polled; `gone` once it is no longer listed), by the node it runs. */
  | { t: number; kind: 'instance'; node: string; instance: string; state: string }
  /** A fault the run applied. */
  | { t: number; kind: 'fault'; action: string; target: string; label: string }
  /** A step began (its label, for the progress line and the report). */
  | { t: number; kind: 'step'; label: string };

export type EntryKind = TimelineEntry['kind'];
export type EntryOf<K extends EntryKind> = Extract<TimelineEntry, { kind: K }>;

/** One expectation's outcome: what was expected, whether it held, and the figure it was judged on. */
export interface Verdict {
  expectation: string;
  passed: boolean;
  /** The measured figure, human-readable ("restored in 212 ms", "41 log lines/min"). */
  measured: string;
}

export interface ScenarioRun {
  scenario: string;
  description: string;
  mode: Mode;
  /** The factor every upstream timing was divided by. */
  speed: number;
  /** RFC 3339: when t = 0 was. */
  startedAt: string;
  durationMs: number;
  /** Every node the run started or saw, in the order to draw them. */
  nodes: string[];
  /** Processes whose log lines are counted (agents by node name, servers by member name). */
  processes: string[];
  entries: TimelineEntry[];
  verdicts: Verdict[];
  passed: boolean;
  /** Set when the run itself failed (a cluster that did not start), not an expectation. */
  error?: string;
}

export interface ScenarioReport {
  scenario: string;
  description: string;
  runs: ScenarioRun[];
}

export function entriesOf<K extends EntryKind>(run: Pick<ScenarioRun, 'entries'>, kind: K): EntryOf<K>[] {
  return run.entries.filter((e): e is EntryOf<K> => e.kind === kind);
}
