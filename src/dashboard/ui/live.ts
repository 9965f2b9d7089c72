// The page's copy of the cluster view: one snapshot from the dashboard's server, then patches, over
// an EventSource that reconnects by itself (and then starts again from a fresh snapshot).
import { pruneTimeline } from '../live-timeline.js';
import { DASHBOARD_HEADER, TIMELINE_WINDOW_MS, type NodeTile, type Patch, type Snapshot } from '../view.js';

export type Connection = 'connecting' | 'live' | 'reconnecting';

/** The snapshot's fields, kept up to date by the patches, and the stream's own state. */
export interface LiveState extends Omit<Snapshot, 'type' | 'now' | 'nodes'> {
  connection: Connection;
  /** The dashboard server's clock minus the page's, so ages read the same on both. */
  clockOffset: number;
  nodes: Map<string, NodeTile>;
  /** Bumped whenever `nodes` changes (the map itself is changed in place). */
  nodesVersion: number;
}

export function emptyState(): LiveState {
  return {
    connection: 'connecting',
    server: '',
    user: '',
    clockOffset: 0,
    startedAt: Date.now(),
    listed: false,
    nodes: new Map(),
    nodesVersion: 0,
    unscheduled: 0,
    controlPlane: { members: [], leaders: [] },
    workloads: [],
    namespaces: [],
    warnings: [],
    timeline: [],
    forbidden: {},
  };
}

export function applySnapshot(s: LiveState, m: Snapshot): LiveState {
  return {
    connection: 'live',
    server: m.server,
    user: m.user,
    clockOffset: m.now - Date.now(),
    startedAt: m.startedAt,
    listed: m.listed,
    nodes: new Map(m.nodes.map((n) => [n.name, n])),
    nodesVersion: s.nodesVersion + 1,
    unscheduled: m.unscheduled,
    controlPlane: m.controlPlane,
    workloads: m.workloads,
    namespaces: m.namespaces,
    warnings: m.warnings,
    timeline: m.timeline,
    forbidden: m.forbidden,
  };
}

export function applyPatch(s: LiveState, m: Patch): LiveState {
  const next: LiveState = { ...s, clockOffset: m.now - Date.now() };
  if (m.nodes || m.removed) {
    for (const n of m.nodes ?? []) s.nodes.set(n.name, n);
    for (const name of m.removed ?? []) s.nodes.delete(name);
    next.nodesVersion = s.nodesVersion + 1;
  }
  if (m.unscheduled !== undefined) next.unscheduled = m.unscheduled;
  if (m.controlPlane) next.controlPlane = m.controlPlane;
  if (m.workloads) next.workloads = m.workloads;
  if (m.namespaces) next.namespaces = m.namespaces;
  if (m.warnings) next.warnings = m.warnings;
  if (m.forbidden) next.forbidden = m.forbidden;
  if (m.listed !== undefined) next.listed = m.listed;
  if (m.timeline) {
    const nowT = m.now - s.startedAt;
    next.timeline = pruneTimeline([...s.timeline, ...m.timeline], nowT - TIMELINE_WINDOW_MS);
  }
  return next;
}

/** Opens the stream; `update` gets each new state. Returns what closes it. */
export function connect(update: (f: (s: LiveState) => LiveState) => void): () => void {
  const es = new EventSource('stream');
  es.addEventListener('snapshot', (e) => {
    const m = JSON.parse((e as MessageEvent<string>).data) as Snapshot;
    update((s) => applySnapshot(s, m));
  });
  es.addEventListener('patch', (e) => {
    const m = JSON.parse((e as MessageEvent<string>).data) as Patch;
    update((s) => applyPatch(s, m));
  });
  // EventSource retries by itself; the next snapshot puts the page back in step.
  es.onerror = () => update((s) => (s.connection === 'reconnecting' ? s : { ...s, connection: 'reconnecting' }));
  return () => es.close();
}

/** The dashboard's own API: same origin, with the header that marks the page's requests. */
export async function api<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(path, { ...init, headers: { ...(init.headers ?? {}), [DASHBOARD_HEADER]: '1', ...(init.body ? { 'content-type': 'application/json' } : {}) } });
  const text = await res.text();
  let body: T;
  try {
    body = JSON.parse(text) as T;
  } catch {
    body = { ok: false, message: text } as T;
  }
  return { status: res.status, body };
}
