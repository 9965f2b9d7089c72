// Judges a recorded run against what its mode must show. Each expectation reads the timeline
// only, from the first fault on (the fault that names its node, when one does), and says what it
// measured, so the verdict table carries the figures a person compares across modes.
import type { Expectation } from './spec.js';
import { entriesOf, type EntryOf, type NodeState, type ScenarioRun, type Verdict } from './timeline.js';

type Run = Pick<ScenarioRun, 'entries' | 'durationMs'>;

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** When the story's fault happened: the first fault naming `target`, else the first fault, else 0. */
function faultTime(run: Run, target?: string): number {
  const faults = entriesOf(run, 'fault');
  return (faults.find((f) => f.target === target) ?? faults[0])?.t ?? 0;
}

/** The node's state at time t (absent before its first sighting). */
function stateAt(run: Run, node: string, t: number): NodeState {
  let s: NodeState = 'absent';
  for (const e of entriesOf(run, 'node-state')) {
    if (e.t > t) break;
    if (e.node === node) s = e.state;
  }
  return s;
}

function perMinute(count: number, ms: number): string {
  return ms > 0 ? `${((count * 60_000) / ms).toFixed(1)}/min` : '—';
}

function bounds(n: number, min?: number, max?: number): boolean {
  return (min === undefined || n >= min) && (max === undefined || n <= max);
}

/** The plural ending after boundsText: "exactly 1 event", "at least 1 event", "none" … "events". */
function plural(min?: number, max?: number): string {
  return (max === 1 && (min === undefined || min === 1)) || (min === 1 && max === undefined) ? '' : 's';
}

function boundsText(min?: number, max?: number): string {
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min}` : `${min} to ${max}`;
  if (min !== undefined) return `at least ${min}`;
  if (max !== undefined) return max === 0 ? 'no' : `at most ${max}`;
  return 'any number of';
}

/** How long a condition held from t0 to the end, given its changes in time order. */
function timeOn(changes: { t: number; on: boolean }[], t0: number, endMs: number): { total: number; atEnd: boolean } {
  let total = 0;
  let since: number | undefined;
  for (const c of changes) {
    if (c.on && since === undefined) since = Math.max(c.t, t0);
    else if (!c.on && since !== undefined) {
      total += Math.max(0, c.t - since);
      since = undefined;
    }
  }
  if (since !== undefined) total += Math.max(0, endMs - since);
  return { total, atEnd: since !== undefined };
}

function within(ms: number, min?: number, max?: number): boolean {
  return (min === undefined || ms >= min) && (max === undefined || ms <= max);
}

function durationBounds(min?: number, max?: number): string {
  if (min !== undefined && max !== undefined) return `between ${secs(min)} and ${secs(max)}`;
  return min !== undefined ? `at least ${secs(min)}` : `at most ${secs(max ?? 0)}`;
}

const msOrSecs = (ms: number) => (ms < 10_000 ? `${Math.round(ms)} ms` : secs(ms));

export function judge(x: Expectation, run: Run): Verdict {
  switch (x.kind) {
    case 'node-restored': {
      const t0 = faultTime(run, x.node);
      const deleted = entriesOf(run, 'node-deleted').find((e) => e.node === x.node && e.t >= t0);
      const back = deleted && entriesOf(run, 'node-registered').find((e) => e.node === x.node && e.t >= deleted.t);
      const took = back && deleted ? back.t - deleted.t : undefined;
      return {
        expectation: `Node ${x.node} is re-created within ${x.withinMs} ms of its deletion`,
        passed: took !== undefined && took <= x.withinMs,
        measured: !deleted ? 'never deleted' : took === undefined ? 'not restored' : `restored in ${took} ms`,
      };
    }
    case 'node-absent': {
      const t0 = faultTime(run, x.node);
      const deleted = entriesOf(run, 'node-deleted').find((e) => e.node === x.node && e.t >= t0);
      const back = deleted && entriesOf(run, 'node-registered').find((e) => e.node === x.node && e.t >= deleted.t);
      return {
        expectation: `Node ${x.node} stays gone once deleted (its agent never re-creates it)`,
        passed: deleted !== undefined && back === undefined,
        measured: !deleted ? 'never deleted' : back ? `re-created after ${back.t - deleted.t} ms` : `absent for the last ${secs(run.durationMs - deleted.t)}`,
      };
    }
    case 'nodes-stay-ready': {
      const t0 = faultTime(run);
      const flips = entriesOf(run, 'node-state').filter((e) => e.t >= t0 && x.nodes.includes(e.node) && e.state !== 'Ready');
      const notReadyAtFault = x.nodes.filter((n) => stateAt(run, n, t0) !== 'Ready');
      const bad = [...new Set([...flips.map((e) => e.node), ...notReadyAtFault])];
      return {
        expectation: `${x.nodes.join(', ')} stay Ready throughout`,
        passed: bad.length === 0,
        // A pass says what held ("every node stayed Ready"), not what did not happen.
        measured: bad.length === 0 ? (x.nodes.length === 1 ? `${x.nodes[0]} stayed Ready` : 'every node stayed Ready') : `${bad.length} went ${[...new Set(flips.map((f) => f.state))].join('/') || 'NotReady'} (${bad.join(', ')}), first after ${secs((flips[0]?.t ?? t0) - t0)}`,
      };
    }
    case 'node-not-ready': {
      const t0 = faultTime(run, x.node);
      const flip = entriesOf(run, 'node-state').find((e) => e.t >= t0 && e.node === x.node && (e.state === 'NotReady' || e.state === 'Unknown'));
      return {
        expectation: `Node ${x.node} turns NotReady/Unknown after the fault`,
        passed: flip !== undefined,
        measured: flip ? `${flip.state} after ${secs(flip.t - t0)}` : 'stayed Ready',
      };
    }
    case 'node-recovers': {
      const t0 = faultTime(run, x.node);
      const states = entriesOf(run, 'node-state').filter((e) => e.t >= t0 && e.node === x.node);
      const down = states.find((e) => e.state !== 'Ready');
      const up = down && states.find((e) => e.t >= down.t && e.state === 'Ready');
      return {
        expectation: `Node ${x.node} is Ready again once the fault is over`,
        passed: up !== undefined && stateAt(run, x.node, run.durationMs) === 'Ready',
        measured: !down ? 'never left Ready' : up ? `Ready again ${secs(up.t - down.t)} after going ${down.state}` : `still ${stateAt(run, x.node, run.durationMs)}`,
      };
    }
    case 'pods-kept':
    case 'pods-lost': {
      const t0 = faultTime(run, x.node);
      // A pod is lost to its node once it is marked for deletion (an eviction) or gone: a pod of an
      // unreachable node stays Terminating until the node returns or goes, yet is replaced at once.
      const lost = run.entries
        .filter((e): e is Extract<typeof e, { kind: 'pod-deleted' | 'pod-terminating' }> => (e.kind === 'pod-deleted' || e.kind === 'pod-terminating') && e.t >= t0 && e.node === x.node)
        .sort((a, b) => a.t - b.t);
      const n = new Set(lost.map((e) => e.uid)).size;
      const measured = n === 0 ? 'none evicted or deleted' : `${n} evicted or deleted, the first after ${secs(lost[0]!.t - t0)}`;
      return x.kind === 'pods-kept'
        ? { expectation: `the pods on ${x.node} are kept`, passed: n === 0, measured }
        : { expectation: `the pods on ${x.node} are evicted or deleted (at least ${x.min})`, passed: n >= x.min, measured };
    }
    case 'pods-running': {
      const last = new Map<string, number>();
      for (const e of entriesOf(run, 'pods')) last.set(e.node, e.running);
      const total = [...last.values()].reduce((a, b) => a + b, 0);
      return { expectation: `${x.count} pods Running at the end`, passed: total === x.count, measured: `${total} Running` };
    }
    case 'log-lines': {
      const t0 = faultTime(run, x.process);
      const re = x.match ? new RegExp(x.match) : undefined;
      const lines = entriesOf(run, 'log').filter((e) => e.t >= t0 && e.process === x.process && (!re || re.test(e.msg)));
      return {
        expectation: `${x.process} logs ${boundsText(x.min, x.max)} line${plural(x.min, x.max)}${x.match ? ` matching "${x.match}"` : ''} after the fault`,
        passed: bounds(lines.length, x.min, x.max),
        measured: `${lines.length} lines (${perMinute(lines.length, run.durationMs - t0)})`,
      };
    }
    case 'events': {
      const t0 = faultTime(run);
      const n = entriesOf(run, 'event').filter((e) => e.t >= t0 && e.reason === x.reason).length;
      // With neither bound the Event must happen; with only a maximum, none is fine.
      const min = x.min ?? (x.max === undefined ? 1 : undefined);
      return { expectation: `${boundsText(min, x.max)} ${x.reason} event${plural(min, x.max)}`, passed: bounds(n, min, x.max), measured: `${n}` };
    }
    case 'machine-without-node': {
      const t0 = faultTime(run, x.node);
      const zombie = entriesOf(run, 'node-state').filter((e) => e.node === x.node).map((e) => ({ t: e.t, on: e.state === 'zombie' }));
      const { total, atEnd } = timeOn(zombie, t0, run.durationMs);
      return {
        expectation: `${x.node}'s machine runs without a Node for ${durationBounds(x.minMs, x.maxMs)}`,
        passed: within(total, x.minMs, x.maxMs),
        measured: total === 0 ? 'never' : `${msOrSecs(total)}${atEnd ? ' (still at the end)' : ''}`,
      };
    }
    case 'pods-unscheduled': {
      const t0 = faultTime(run);
      const waiting = entriesOf(run, 'unscheduled').map((e) => ({ t: e.t, on: e.count > 0 }));
      const { total, atEnd } = timeOn(waiting, t0, run.durationMs);
      const most = Math.max(0, ...entriesOf(run, 'unscheduled').filter((e) => e.t >= t0).map((e) => e.count));
      return {
        expectation: `pods wait with no node to run on for ${durationBounds(x.minMs, x.maxMs)}`,
        passed: within(total, x.minMs, x.maxMs),
        measured: total === 0 ? 'never' : `${msOrSecs(total)}, up to ${most} at once${atEnd ? ' (still at the end)' : ''}`,
      };
    }
    case 'machines-added': {
      const t0 = faultTime(run);
      const first = new Map<string, EntryOf<'instance'>>();
      for (const e of entriesOf(run, 'instance')) if (!first.has(e.instance)) first.set(e.instance, e);
      const added = [...first.values()].filter((e) => e.t >= t0);
      return {
        expectation: `${boundsText(x.min, x.max)} cloud instance${plural(x.min, x.max)} added after the fault`,
        passed: bounds(added.length, x.min, x.max),
        measured: added.length === 0 ? 'none' : `${added.length} (${added.map((e) => e.node).join(', ')}), the first after ${secs(added[0]!.t - t0)}`,
      };
    }
  }
}
