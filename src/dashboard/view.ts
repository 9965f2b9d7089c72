// What the dashboard's server sends the page: the cluster reduced to what a person looks at, so
// a browser holds a row per node and counts per node instead of every pod. Shared by the server
// (./cluster-view.ts) and the page (./ui/), which is why it imports nothing but the timeline's
// types.
import type { TimelineEntry } from '../scenarios/timeline.js';

/** A node as the page shows it: its Ready condition, or `absent` when its Node object is gone. */
export type NodeHealth = 'Ready' | 'NotReady' | 'Unknown' | 'absent';

export interface PodCounts {
  running: number;
  pending: number;
  succeeded: number;
  failed: number;
  /** Marked for deletion, whatever their phase. */
  terminating: number;
}

export interface NodeTile {
  name: string;
  health: NodeHealth;
  /** spec.unschedulable (kubectl's SchedulingDisabled). */
  cordoned: boolean;
  /** Marked for retirement: its agent drains it and removes it. */
  retiring: boolean;
  roles: string[];
  /** The Ready condition's reason and message, when it is not Ready. */
  reason?: string;
  /** When the Ready condition last changed (ms since the epoch). */
  since?: number;
  /** When the node's Lease was last renewed (ms since the epoch); absent without a Lease. */
  leaseRenewedAt?: number;
  /** Lease renewals seen in the last minute. */
  renewalsPerMinute: number;
  /** Times its agent re-created it after it was deleted (NodeReregistered events). */
  reregistrations: number;
  /** key=value:Effect. */
  taints: string[];
  pods: PodCounts;
  /** Millicores. */
  cpu: { requested: number; allocatable: number };
  /** Bytes. */
  memory: { requested: number; allocatable: number };
  /** spec.providerID: the cloud instance behind it. */
  providerID?: string;
  /** When it was seen deleted (absent nodes only; ms since the epoch). */
  absentSince?: number;
  /** When it came back after it was seen deleted (ms since the epoch). */
  returnedAt?: number;
}

export interface Member {
  /** host:port, as default/kubernetes lists it. */
  address: string;
  /** Listed in default/kubernetes now (a member whose Lease expired is dropped from it). */
  listed: boolean;
  /** When its endpoint Lease was last renewed (ms since the epoch). */
  leaseRenewedAt?: number;
  /** Its /readyz, as asked by the dashboard: 'ok', or why not. */
  ready: string;
  /** Its storage check from /readyz?verbose ('ok' or the failure). */
  storage?: string;
}

export interface LeaderLock {
  name: string;
  /** The Lease's holderIdentity, as the elector wrote it ('' when released). */
  holder: string;
  /** The member (host:port, as in `members`) whose controllers hold it, when its endpoint Lease says so. */
  member?: string;
  renewedAt?: number;
}

export interface ControlPlaneView {
  members: Member[];
  leaders: LeaderLock[];
  /** The cluster autoscaler's status (kube-system/cluster-autoscaler-status), as it wrote it. */
  autoscalerStatus?: string;
}

export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Job';

export interface WorkloadRow {
  kind: WorkloadKind;
  namespace: string;
  name: string;
  desired: number;
  ready: number;
  /** Rollout (or, for a Job, run) state in a word: Complete, Progressing, Stalled, Running, Failed… */
  state: string;
  /** Whether the scale subresource applies (Deployments and StatefulSets). */
  scalable: boolean;
}

/** A namespace: its phase (Active, Terminating; '' when unknown) and what runs in it. */
export interface NamespaceRow {
  name: string;
  phase: string;
  pods: PodCounts;
  services: number;
}

/** A Service as `kubectl get svc` shows it, with the endpoints behind it in a word. */
export interface ServiceRow {
  namespace: string;
  name: string;
  /** ClusterIP, NodePort, LoadBalancer, ExternalName. */
  type: string;
  clusterIP: string;
  /** kubectl's PORT(S): 80/TCP, 80:30080/TCP. */
  ports: string;
  /** Ready endpoints behind it. */
  ready: number;
  /** "2 of 3 endpoints ready", "no ready endpoints", "no selector", "external address pending"… */
  state: string;
}

/** One namespace up close, for its panel. */
export interface NamespaceDetail {
  pods: PodRow[];
  services: ServiceRow[];
}

export interface WarningEvent {
  /** namespace/name of the Event: a key for lists. */
  id: string;
  at: number;
  reason: string;
  /** kind/name of what it is about. */
  object: string;
  message: string;
  count: number;
}

/** What the page may not see, by resource, with the API's own message. */
export type Forbidden = Record<string, string>;

export interface Snapshot {
  type: 'snapshot';
  /** The server's clock when it sent this (ms since the epoch): the page ages Leases by it. */
  now: number;
  /** Where the dashboard's server talks to the API, and as whom. */
  server: string;
  user: string;
  /** The timeline's t = 0 (ms since the epoch): when the dashboard started watching. */
  startedAt: number;
  /**
   * Whether the watches have listed (or been refused). A first page may be sent before they have,
   * and until then an empty view means "not known yet", not "nothing happened".
   */
  listed: boolean;
  nodes: NodeTile[];
  unscheduled: number;
  controlPlane: ControlPlaneView;
  workloads: WorkloadRow[];
  namespaces: NamespaceRow[];
  warnings: WarningEvent[];
  timeline: TimelineEntry[];
  forbidden: Forbidden;
}

/** What changed since the last message; fields left out did not change. */
export interface Patch {
  type: 'patch';
  now: number;
  /** Set when the watches have listed since the last message. */
  listed?: boolean;
  nodes?: NodeTile[];
  /** Names of node tiles no longer shown. */
  removed?: string[];
  unscheduled?: number;
  controlPlane?: ControlPlaneView;
  workloads?: WorkloadRow[];
  namespaces?: NamespaceRow[];
  warnings?: WarningEvent[];
  /** Entries added to the timeline (the page drops those older than its window). */
  timeline?: TimelineEntry[];
  forbidden?: Forbidden;
}

export type ViewMessage = Snapshot | Patch;

/** An action the page asks for, done with the dashboard user's own credentials. */
export type ActionRequest =
  | { action: 'cordon' | 'uncordon' | 'drain' | 'retire'; node: string }
  | { action: 'delete-pod'; namespace: string; pod: string }
  | { action: 'scale'; kind: WorkloadKind; namespace: string; name: string; replicas: number };

export interface ActionResult {
  ok: boolean;
  /** What happened, or the API's message when it refused. */
  message: string;
  /** The refusal's HTTP code (403 when RBAC says no). */
  code?: number;
}

/** A pod on a node, for the node's detail panel. */
export interface PodRow {
  namespace: string;
  name: string;
  phase: string;
  ready: string;
  restarts: number;
  terminating: boolean;
  containers: string[];
  /** The node it is bound to (namespace panels; a node's panel knows it). */
  node?: string;
}

/** The header that marks the page's own requests: a page of another site cannot send it without CORS. */
export const DASHBOARD_HEADER = 'x-skiff-dashboard';

/** How long the timeline looks back, and how long a deleted node stays on the page as absent. */
export const TIMELINE_WINDOW_MS = 10 * 60_000;
