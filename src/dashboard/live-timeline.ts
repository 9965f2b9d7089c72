// The dashboard's live timeline is the scenario report's picture (../scenarios/report.ts) drawn
// over a sliding window: the entries of the last minutes, each node's state carried in from before
// the window, and only the nodes worth a row. Pure, so the server prunes with it and the page
// draws with it.
import type { ScenarioRun, TimelineEntry } from '../scenarios/timeline.js';
import { humanDuration } from '../util/human-duration.js';

/** Entries that hold a state until the next of their kind (a node's, the cluster's), by that key. */
function stateKey(e: TimelineEntry): string | undefined {
  switch (e.kind) {
    case 'node-state':
    case 'pods':
      return `${e.kind}/${e.node}`;
    case 'unscheduled':
      return 'unscheduled';
    case 'leader':
      return `leader/${e.lease}`;
    default:
      return undefined;
  }
}

/**
 * The entries from `fromT` on, each state that began earlier carried in at `fromT` (the latest of
 * its key), and at most `max` entries (the newest).
 */
export function pruneTimeline(entries: TimelineEntry[], fromT: number, max = Infinity): TimelineEntry[] {
  if (entries.length === 0 || (entries[0]!.t >= fromT && entries.length <= max)) return entries;
  const carried = new Map<string, TimelineEntry>();
  const kept: TimelineEntry[] = [];
  for (const e of entries) {
    if (e.t >= fromT) {
      kept.push(e);
      continue;
    }
    const key = stateKey(e);
    if (key !== undefined) carried.set(key, { ...e, t: fromT });
  }
  const out = [...carried.values(), ...kept];
  return out.length > max ? out.slice(out.length - max) : out;
}

export interface LiveRun {
  run: ScenarioRun;
  /** Nodes with something to show that did not get a row. */
  hidden: number;
}

/**
 * The last `windowMs` up to `nowT` as a run the report's renderer draws (t = 0 at the window's
 * start): rows for the nodes that changed or are not Ready, those that changed most recently first,
 * at most `maxNodes`. A fleet of steady Ready nodes draws no rows: nothing happened to them.
 */
export function liveRun(entries: TimelineEntry[], nowT: number, windowMs: number, maxNodes: number): LiveRun {
  const from = Math.max(0, nowT - windowMs);
  const inWindow = pruneTimeline(entries, from);
  const lastChange = new Map<string, number>();
  const notReady = new Set<string>();
  const states = new Map<string, number>();
  for (const e of inWindow) {
    if (e.kind === 'node-state') {
      states.set(e.node, (states.get(e.node) ?? 0) + 1);
      if (e.state !== 'Ready') notReady.add(e.node);
      else notReady.delete(e.node);
      if (e.t > from) lastChange.set(e.node, e.t);
    } else if (e.kind === 'node-registered' || e.kind === 'node-deleted') {
      lastChange.set(e.node, e.t);
    }
  }
  const candidates = new Set([...lastChange.keys(), ...notReady]);
  // A node first seen in the window (the dashboard just started) has one state and no story yet.
  for (const n of candidates) if (!notReady.has(n) && (states.get(n) ?? 0) <= 1 && !inWindow.some((e) => e.kind === 'node-deleted' && e.node === n)) candidates.delete(n);
  const ranked = [...candidates].sort((a, b) => (lastChange.get(b) ?? from) - (lastChange.get(a) ?? from) || a.localeCompare(b));
  const shown = new Set(ranked.slice(0, maxNodes));
  const nodes = [...shown].sort();
  const keep = (e: TimelineEntry) => !('node' in e) || e.node === undefined || shown.has(e.node);
  return {
    run: {
      scenario: 'live',
      description: '',
      mode: 'skiff',
      speed: 1,
      startedAt: '',
      durationMs: Math.max(1, nowT - from),
      nodes,
      processes: [],
      entries: inWindow.filter(keep).map((e) => ({ ...e, t: e.t - from })),
      verdicts: [],
      passed: true,
    },
    hidden: ranked.length - shown.size,
  };
}

export interface TimelineCaption {
  /** Whether the dashboard's watches have listed: before that, an empty picture means nothing. */
  listed: boolean;
  /** The node watch was refused to this user. */
  nodesForbidden: boolean;
  /** How long the dashboard has watched: the picture cannot speak for the time before. */
  watchedMs: number;
  windowMs: number;
  nodes: number;
  rows: number;
  hidden: number;
}

/** The line beside the timeline's heading: what the picture covers, and what it found there. */
export function timelineCaption(c: TimelineCaption): string {
  if (!c.listed) return 'waiting for the cluster’s first data…';
  if (c.nodesForbidden) return 'not shown: this user may not list nodes';
  const span = c.watchedMs >= c.windowMs ? `the last ${Math.round(c.windowMs / 60_000)} minutes` : `the ${humanDuration(c.watchedMs)} since the dashboard started watching`;
  const found =
    c.rows > 0
      ? `${c.rows} node${c.rows === 1 ? '' : 's'} that changed state or are not Ready${c.hidden > 0 ? ` (${c.hidden} more not drawn)` : ''}`
      : c.nodes === 0
        ? 'no nodes'
        : c.nodes === 1
          ? 'the node stayed Ready'
          : `all ${c.nodes} nodes stayed Ready`;
  return `${span}; ${found}`;
}
