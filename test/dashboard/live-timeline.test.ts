import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveRun, pruneTimeline, timelineCaption } from '../../src/dashboard/live-timeline.js';
import type { TimelineEntry } from '../../src/scenarios/timeline.js';
import { renderTimelineSvg } from '../../src/scenarios/report.js';

const state = (t: number, node: string, s: 'Ready' | 'NotReady' | 'Unknown' | 'absent'): TimelineEntry => ({ t, kind: 'node-state', node, state: s, taints: [], unschedulable: false });

describe('the live timeline', () => {
  it('carries each state that began before the window into it, and drops the rest of the past', () => {
    const entries: TimelineEntry[] = [
      state(0, 'a', 'Ready'),
      state(100, 'a', 'Unknown'),
      { t: 150, kind: 'node-deleted', node: 'a', uid: '1' },
      state(150, 'a', 'absent'),
      { t: 200, kind: 'unscheduled', count: 3 },
      { t: 900, kind: 'node-registered', node: 'a', uid: '2', again: true },
      state(900, 'a', 'Ready'),
    ];
    const pruned = pruneTimeline(entries, 500);
    assert.deepEqual(pruned, [state(500, 'a', 'absent'), { t: 500, kind: 'unscheduled', count: 3 }, { t: 900, kind: 'node-registered', node: 'a', uid: '2', again: true }, state(900, 'a', 'Ready')]);
    assert.equal(pruneTimeline(entries, 0), entries, 'nothing to prune: the same array');
    assert.equal(pruneTimeline(entries, 500, 2).length, 2, 'at most max, the newest');
  });

  it('draws the nodes that changed or are not Ready, newest change first, within the row budget', () => {
    const entries: TimelineEntry[] = [state(0, 'steady', 'Ready'), state(0, 'a', 'Ready'), state(0, 'b', 'Ready'), state(0, 'down', 'Unknown'), state(5_000, 'a', 'NotReady'), state(8_000, 'b', 'NotReady'), state(9_000, 'b', 'Ready')];
    const { run, hidden } = liveRun(entries, 10_000, 60_000, 2);
    assert.deepEqual(run.nodes, ['a', 'b'], 'the two most recent changes');
    assert.equal(hidden, 1, 'the node down since the start did not fit');
    assert.equal(run.durationMs, 10_000);
    assert.ok(run.entries.every((e) => !('node' in e) || run.nodes.includes(e.node!)));
    const svg = renderTimelineSvg(run, { widthPx: 800, durationMs: run.durationMs, logs: false });
    assert.equal((svg.match(/<g class="node-row"/g) ?? []).length, 2);
    assert.doesNotMatch(svg, /log lines per/, 'no log strips');
  });

  it('slides: t = 0 is the window start, with the earlier state carried in', () => {
    const { run } = liveRun([state(0, 'a', 'Ready'), state(1_000, 'a', 'Unknown')], 70_000, 60_000, 10);
    assert.deepEqual(run.nodes, ['a'], 'not Ready: shown though its change is before the window');
    assert.deepEqual(run.entries, [state(0, 'a', 'Unknown')]);
    assert.equal(run.durationMs, 60_000);
  });

  it('claims nothing before its first data, and no more than the time it watched', () => {
    const base = { listed: true, nodesForbidden: false, watchedMs: 45_000, windowMs: 600_000, nodes: 3, rows: 0, hidden: 0 };
    assert.equal(timelineCaption({ ...base, listed: false, nodes: 0 }), 'waiting for the cluster’s first data…');
    assert.equal(timelineCaption(base), 'the 45s since the dashboard started watching; all 3 nodes stayed Ready');
    assert.equal(timelineCaption({ ...base, watchedMs: 700_000, nodes: 1 }), 'the last 10 minutes; the node stayed Ready');
    assert.equal(timelineCaption({ ...base, rows: 2, hidden: 1 }), 'the 45s since the dashboard started watching; 2 nodes that changed state or are not Ready (1 more not drawn)');
    assert.equal(timelineCaption({ ...base, nodes: 0 }), 'the 45s since the dashboard started watching; no nodes');
    assert.equal(timelineCaption({ ...base, nodesForbidden: true }), 'not shown: this user may not list nodes');
  });
});
