// Pod status as the kubelet reports it, computed from what the runtime says about each container:
// phase (upstream getPhase), conditions, containerStatuses in the shapes kubectl's printers and
// `describe` read. Pure functions: pod sync decides, these only describe.
import type { ContainerState, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus, RestartPolicy } from '../api/kinds/pod.js';
import { rfc3339 } from '../util/time.js';

/** What pod sync knows about one container, in status terms. */
export interface ContainerView {
  name: string;
  image: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  started: boolean;
  restartCount: number;
  containerID?: string;
  imageID?: string;
}

/** Upstream getPhase (init containers folded in by the caller through `initPending` / `initFailed`). */
export function podPhase(restartPolicy: RestartPolicy, containers: ContainerView[], init: { pending: boolean; failed: boolean } = { pending: false, failed: false }): PodPhase {
  if (init.failed) return 'Failed';
  if (init.pending) return 'Pending';
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of containers) {
    if (c.state.running) running++;
    else if (c.state.terminated) {
      stopped++;
      if (c.state.terminated.exitCode === 0) succeeded++;
    } else if (c.lastState.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (restartPolicy === 'Always') return 'Running';
    if (restartPolicy === 'OnFailure') return stopped === succeeded ? 'Succeeded' : 'Running';
    return stopped === succeeded ? 'Succeeded' : 'Failed';
  }
  return 'Pending';
}

function cond(type: string, ok: boolean, reason?: string, message?: string): PodCondition {
  const c: PodCondition = { type, status: ok ? 'True' : 'False' };
  if (!ok && reason) c.reason = reason;
  if (!ok && message) c.message = message;
  return c;
}

export interface PodStatusInput {
  pod: Pod;
  phase: PodPhase;
  containers: ContainerView[];
  initContainers: ContainerView[];
  /** Names of init containers not yet completed (Initialized=False while non-empty). */
  initIncomplete: string[];
  hostIP: string;
  /** Empty while the pod has no IP yet (its sandbox is being created). */
  podIP: string;
  startTime: number;
  now: number;
  reason?: string;
  message?: string;
  /** e.g. DisruptionTarget on node shutdown. */
  extraConditions?: PodCondition[];
}

/** The conditions the agent owns; others (set by controllers) are kept as they are. */
const OWNED = new Set(['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']);

export function buildPodStatus(i: PodStatusInput): PodStatus {
  const existing = i.pod.status?.conditions ?? [];
  const terminal = i.phase === 'Succeeded' || i.phase === 'Failed';
  const unready = i.containers.filter((c) => !c.ready).map((c) => c.name);
  const allReady = unready.length === 0 && i.containers.length > 0 && !terminal;
  const notReadyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMessage = terminal ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const gates = (i.pod.spec?.readinessGates ?? []).map((g) => g.conditionType);
  const gatesOk = gates.every((g) => existing.some((c) => c.type === g && c.status === 'True'));
  const ours: PodCondition[] = [
    cond('PodReadyToStartContainers', !terminal || i.phase === 'Succeeded' ? true : false),
    cond('Initialized', i.initIncomplete.length === 0, 'ContainersNotInitialized', `containers with incomplete status: [${i.initIncomplete.join(' ')}]`),
    cond('Ready', allReady && gatesOk, allReady && !gatesOk ? 'ReadinessGatesNotReady' : notReadyReason, allReady && !gatesOk ? 'the status of pod readiness gate is not "True"' : notReadyMessage),
    cond('ContainersReady', allReady, notReadyReason, notReadyMessage),
  ];
  if (terminal) ours[0] = cond('PodReadyToStartContainers', false);
  const extra = i.extraConditions ?? [];
  const conditions: PodCondition[] = [];
  const t = rfc3339(i.now);
  const stamp = (c: PodCondition): PodCondition => {
    const prev = existing.find((p) => p.type === c.type);
    return { ...c, lastProbeTime: null, lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : t };
  };
  for (const c of ours) conditions.push(stamp(c));
  for (const c of extra) conditions.push(stamp(c));
  // Conditions others own (PodScheduled from the scheduler, DisruptionTarget, readiness gates) stay.
  for (const c of existing) if (!OWNED.has(c.type) && !extra.some((e) => e.type === c.type)) conditions.push(c);
  if (!conditions.some((c) => c.type === 'PodScheduled')) conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(i.startTime) });

  const status: PodStatus = {
    phase: i.phase,
    conditions,
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    ...(i.podIP ? { podIP: i.podIP, podIPs: [{ ip: i.podIP }] } : {}),
    startTime: rfc3339(i.startTime),
    containerStatuses: i.containers.map(containerStatus),
  };
  if (i.initContainers.length > 0) status.initContainerStatuses = i.initContainers.map(containerStatus);
  if (i.pod.status?.qosClass) status.qosClass = i.pod.status.qosClass;
  if (i.reason) status.reason = i.reason;
  if (i.message) status.message = i.message;
  return status;
}

function containerStatus(c: ContainerView): ContainerStatus {
  const s: ContainerStatus = {
    name: c.name,
    state: c.state,
    lastState: c.lastState,
    ready: c.ready,
    restartCount: c.restartCount,
    image: c.image,
    imageID: c.imageID ?? '',
    started: c.started,
  };
  if (c.containerID) s.containerID = c.containerID;
  return s;
}

/** The fields the agent writes, normalised, to tell whether a PATCH is needed. */
export function statusFingerprint(s: PodStatus | undefined): string {
  if (!s) return '';
  return JSON.stringify({
    phase: s.phase,
    reason: s.reason ?? '',
    message: s.message ?? '',
    hostIP: s.hostIP ?? '',
    podIP: s.podIP ?? '',
    startTime: s.startTime ?? '',
    conditions: (s.conditions ?? []).map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '']).sort(),
    containerStatuses: (s.containerStatuses ?? []).map(normaliseContainer),
    initContainerStatuses: (s.initContainerStatuses ?? []).map(normaliseContainer),
  });
}

function normaliseState(st: ContainerState | undefined): unknown {
  if (!st) return {};
  if (st.running) return { running: st.running.startedAt ?? '' };
  if (st.terminated) {
    const t = st.terminated;
    return { terminated: [t.exitCode, t.signal ?? 0, t.reason ?? '', t.message ?? '', t.startedAt ?? '', t.finishedAt ?? '', t.containerID ?? ''] };
  }
  if (st.waiting) return { waiting: [st.waiting.reason ?? '', st.waiting.message ?? ''] };
  return {};
}

function normaliseContainer(c: ContainerStatus): unknown {
  return [c.name, normaliseState(c.state), normaliseState(c.lastState), c.ready === true, c.restartCount ?? 0, c.image ?? '', c.containerID ?? '', c.imageID ?? '', c.started === true];
}

/** A merge patch that turns `current` into `next` for the fields the agent owns (null removes). */
export function statusPatch(next: PodStatus, current: PodStatus | undefined): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  if (current?.reason && !next.reason) patch.reason = null;
  if (current?.message && !next.message) patch.message = null;
  if (current?.initContainerStatuses && !next.initContainerStatuses) patch.initContainerStatuses = null;
  return { status: patch };
}
