// What a person reads after a scenario: one self-contained HTML page (inline CSS, no scripts, no
// network) with an SVG timeline per run. Every run of a report is drawn on the same time scale, so a
// skiff run and a kubernetes run of one scenario line up one above the other and the difference
// (a node that comes back, a log flood) is visible without reading numbers. The SVG is a pure
// function of the run's data because the dashboard draws the same picture.

import { entriesOf, type EntryOf, type NodeState, type ScenarioReport, type ScenarioRun, type Verdict } from './timeline.js';

export interface TimelineSvgOptions {
  widthPx: number;
  /** Where the time axis ends: the longest run's duration, so runs drawn one above the other align. */
  durationMs: number;
  /**
   * Log lines per bucket that fill a strip's height. Share one figure between the runs of a report:
   * scaled each on its own, a quiet agent's three lines would look as tall as a flood.
   * Defaults to this run's busiest bucket.
   */
  logScaleMax?: number;
  /** Draw the log-line strips (default). The dashboard reads no process logs and leaves them out. */
  logs?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Text

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Data as HTML/SVG text or attribute value. Log lines carry terminal colours and control bytes. */
function esc(text: string): string {
  return text
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Seconds for tooltips and tables: to 10 ms, since sped-up runs put events tens of ms apart. */
function at(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

function lines(count: number): string {
  return count === 1 ? '1 line' : `${count} lines`;
}

/** A coordinate, rounded so the same data renders the same bytes and the SVG stays small. */
function px(v: number): string {
  const r = Math.round(v * 10) / 10;
  return Object.is(r, -0) ? '0' : String(r);
}

// ---------------------------------------------------------------------------------------------
// Colours: one table for the SVG and the HTML legend, so the two cannot disagree.

const STATE_STYLE: Record<NodeState, { fill: string; stroke: string; dashed: boolean; meaning: string }> = {
  Ready: { fill: '#2e7d32', stroke: 'none', dashed: false, meaning: 'Ready' },
  NotReady: { fill: '#f9a825', stroke: 'none', dashed: false, meaning: 'NotReady' },
  Unknown: { fill: '#c62828', stroke: 'none', dashed: false, meaning: 'Unknown (node stopped reporting)' },
  absent: { fill: '#f2f2f2', stroke: '#6b6b6b', dashed: true, meaning: 'absent (no Node object)' },
  retired: { fill: '#424242', stroke: 'none', dashed: false, meaning: 'retired' },
  zombie: { fill: '#5d4037', stroke: '#c62828', dashed: true, meaning: 'zombie (no Node object, its machine runs)' },
};

const COLOUR = {
  text: '#1a1a1a',
  muted: '#595959',
  grid: '#e3e3e3',
  taint: '#7b1fa2',
  reregistered: '#1565c0',
  leader: '#00695c',
  unscheduled: '#ffcc80',
  deleted: '#111111',
  pods: '#bbdefb',
  podsLine: '#1565c0',
  fault: '#ad1457',
  step: '#607d8b',
  eventNormal: '#546e7a',
  eventWarning: '#d84315',
  log: '#78909c',
  logProblem: '#e65100',
  afterEnd: '#f5f5f5',
} as const;

// ---------------------------------------------------------------------------------------------
// Layout (SVG user units; the viewBox scales them to the page)

const LABEL_W = 130;
const RIGHT_W = 84;
const FAULT_LANE_H = 13;
const MAX_FAULT_LANES = 3;
const AXIS_H = 20;
const STATE_H = 16;
const PODS_H = 12;
const NODE_GAP = 10;
const EVENTS_H = 14;
const LOG_HEADER_H = 16;
const LOG_H = 18;
const LOG_GAP = 4;
const FONT = 'system-ui, -apple-system, sans-serif';
/** A rough width of one character of 10-unit text, to keep fault labels from overprinting. */
const CHAR_W = 5.8;

interface Scale {
  left: number;
  right: number;
  durationMs: number;
  x(t: number): number;
}

function scaleFor(widthPx: number, durationMs: number): Scale {
  const left = LABEL_W;
  const right = Math.max(left + 1, widthPx - RIGHT_W);
  const span = Math.max(1, durationMs);
  return { left, right, durationMs: span, x: (t) => left + (Math.min(Math.max(t, 0), span) / span) * (right - left) };
}

const TICK_STEPS_MS = [100, 200, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];

/** The smallest round step that leaves room for a label between ticks. */
function tickStep(scale: Scale): number {
  const minGap = 64;
  const perMs = (scale.right - scale.left) / scale.durationMs;
  return TICK_STEPS_MS.find((s) => s * perMs >= minGap) ?? TICK_STEPS_MS[TICK_STEPS_MS.length - 1]!;
}

const BUCKET_STEPS_MS = [1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000];

/** Per second where that gives at most ~120 bars, else the next round width that does. */
function logBucketMs(durationMs: number): number {
  return BUCKET_STEPS_MS.find((b) => Math.ceil(durationMs / b) <= 120) ?? Math.ceil(durationMs / 120);
}

function bucketLabel(ms: number): string {
  return ms === 1000 ? 'second' : `${ms / 1000} s`;
}

// ---------------------------------------------------------------------------------------------
// Data shaped for drawing

interface Span<E> {
  entry: E;
  from: number;
  to: number;
}

/** Each entry lasts until the next one (they are one node's, in time order) or the end of the run. */
function spans<E extends { t: number }>(entries: E[], endMs: number): Span<E>[] {
  return entries.map((entry, i) => {
    const next = entries[i + 1];
    return { entry, from: entry.t, to: Math.max(entry.t, next ? next.t : endMs) };
  });
}

function sortedRun(run: ScenarioRun): ScenarioRun {
  // Array.prototype.sort is stable: entries with one timestamp keep the order they were recorded in.
  return { ...run, entries: [...run.entries].sort((a, b) => a.t - b.t) };
}

const PROBLEM_LEVELS = new Set(['w', 'warn', 'warning', 'e', 'err', 'error', 'f', 'fatal', 'panic', 'crit', 'critical']);

function isProblem(level: string): boolean {
  return PROBLEM_LEVELS.has(level.toLowerCase());
}

interface LogBucket {
  count: number;
  problems: number;
  sample: string;
}

interface LogStrip {
  process: string;
  total: number;
  buckets: Map<number, LogBucket>;
}

function logStrips(run: ScenarioRun, bucketMs: number): LogStrip[] {
  const byProcess = new Map<string, LogStrip>(run.processes.map((p) => [p, { process: p, total: 0, buckets: new Map() }]));
  for (const e of entriesOf(run, 'log')) {
    const strip = byProcess.get(e.process);
    if (!strip) continue;
    const index = Math.floor(Math.max(0, e.t) / bucketMs);
    const bucket = strip.buckets.get(index) ?? { count: 0, problems: 0, sample: e.msg };
    bucket.count++;
    if (isProblem(e.level)) bucket.problems++;
    strip.buckets.set(index, bucket);
    strip.total++;
  }
  return [...byProcess.values()];
}

function busiestBucket(strips: LogStrip[]): number {
  let max = 0;
  for (const s of strips) for (const b of s.buckets.values()) max = Math.max(max, b.count);
  return max;
}

// ---------------------------------------------------------------------------------------------
// SVG pieces

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${px(x)}" y="${px(y)}"${attrs ? ` ${attrs}` : ''}>${esc(content)}</text>`;
}

/** A row label on the left, clipped to the label column, with the full name as its tooltip. */
function rowLabel(y: number, label: string, cls: string, size = 12, fill: string = COLOUR.text): string {
  const shown = clip(label, Math.floor((LABEL_W - 12) / (size * 0.58)));
  return `<text class="${cls}" x="${LABEL_W - 8}" y="${px(y)}" text-anchor="end" font-size="${size}" fill="${fill}"><title>${esc(label)}</title>${esc(shown)}</text>`;
}

interface FaultPlacement {
  fault: EntryOf<'fault'>;
  x: number;
  lane: number;
  anchorEnd: boolean;
  label: string;
}

/** Fault labels in up to three lanes, each in the first lane where it does not overprint another. */
function placeFaults(faults: EntryOf<'fault'>[], scale: Scale, widthPx: number): FaultPlacement[] {
  const laneEnds: number[] = [];
  return faults.map((fault) => {
    const x = scale.x(fault.t);
    const label = clip(fault.label || `${fault.action} ${fault.target}`, 32);
    const w = label.length * CHAR_W;
    const anchorEnd = x + 3 + w > widthPx - 2;
    const start = anchorEnd ? x - 3 - w : x + 3;
    let lane = laneEnds.findIndex((end) => end + 4 <= start);
    if (lane < 0) lane = laneEnds.length < MAX_FAULT_LANES ? laneEnds.length : laneEnds.indexOf(Math.min(...laneEnds));
    laneEnds[lane] = Math.max(laneEnds[lane] ?? -Infinity, start + w);
    return { fault, x, lane, anchorEnd, label };
  });
}

function axis(scale: Scale, y: number, bottom: number): string {
  const step = tickStep(scale);
  const out: string[] = [`<g class="axis" font-size="10" fill="${COLOUR.muted}">`];
  out.push(`<line x1="${px(scale.left)}" y1="${px(y)}" x2="${px(scale.right)}" y2="${px(y)}" stroke="${COLOUR.muted}"/>`);
  for (let t = 0; t <= scale.durationMs + 1e-6; t += step) {
    const x = scale.x(t);
    const label = step < 1000 ? `${(t / 1000).toFixed(1)} s` : `${Math.round(t / 1000)} s`;
    out.push(`<line class="grid" x1="${px(x)}" y1="${px(y)}" x2="${px(x)}" y2="${px(bottom)}" stroke="${COLOUR.grid}"/>`);
    out.push(`<line x1="${px(x)}" y1="${px(y - 4)}" x2="${px(x)}" y2="${px(y)}" stroke="${COLOUR.muted}"/>`);
    out.push(text(x, y - 6, label, `class="tick" text-anchor="middle"`));
  }
  out.push(text(scale.left - 8, y - 6, 'time', 'text-anchor="end"'));
  out.push('</g>');
  return out.join('');
}

function segment(node: string, s: Span<EntryOf<'node-state'>>, scale: Scale, y: number): string {
  const style = STATE_STYLE[s.entry.state];
  const x = scale.x(s.from);
  const w = Math.max(0.5, scale.x(s.to) - x);
  const detail = [
    `${node}: ${s.entry.state} from ${at(s.from)} to ${at(s.to)}`,
    s.entry.taints.length > 0 ? `taints: ${s.entry.taints.join(', ')}` : 'no taints',
    ...(s.entry.unschedulable ? ['unschedulable'] : []),
  ].join('; ');
  const stroke = style.stroke === 'none' ? '' : ` stroke="${style.stroke}" stroke-width="1"${style.dashed ? ' stroke-dasharray="4 3"' : ''}`;
  const out = [
    `<rect class="segment state-${s.entry.state}" data-state="${s.entry.state}" data-from="${s.from}" data-to="${s.to}" x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${STATE_H}" fill="${style.fill}"${stroke}><title>${esc(detail)}</title></rect>`,
  ];
  if (s.entry.taints.length > 0) {
    out.push(
      `<rect class="taint-marker" data-taints="${esc(s.entry.taints.join(','))}" x="${px(x)}" y="${px(y)}" width="${px(w)}" height="4" fill="${COLOUR.taint}"><title>${esc(detail)}</title></rect>`,
    );
  }
  return out.join('');
}

function podsRow(node: string, pods: Span<EntryOf<'pods'>>[], scale: Scale, y: number, maxRunning: number): string {
  const out: string[] = [`<g class="pods" font-size="9" fill="${COLOUR.podsLine}">`];
  let lastLabelX = -Infinity;
  for (const s of pods) {
    const x = scale.x(s.from);
    const w = Math.max(0.5, scale.x(s.to) - x);
    const h = (s.entry.running / maxRunning) * (PODS_H - 2);
    const top = y + PODS_H - h;
    const tip = `${node} pods from ${at(s.from)} to ${at(s.to)}: ${s.entry.running} running, ${s.entry.pending} pending, ${s.entry.terminating} terminating`;
    out.push(
      `<g class="pods-step" data-running="${s.entry.running}" data-pending="${s.entry.pending}" data-terminating="${s.entry.terminating}"><title>${esc(tip)}</title>` +
        `<rect x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${PODS_H}" fill="transparent"/>` +
        (h > 0 ? `<rect x="${px(x)}" y="${px(top)}" width="${px(w)}" height="${px(h)}" fill="${COLOUR.pods}"/>` : '') +
        `<line x1="${px(x)}" y1="${px(top)}" x2="${px(x + w)}" y2="${px(top)}" stroke="${COLOUR.podsLine}" stroke-width="1.2"/></g>`,
    );
    // A count at every change, unless it would overprint the previous one.
    if (x - lastLabelX >= 14) {
      out.push(text(x + 2, y + PODS_H - 2, String(s.entry.running), 'class="pods-count"'));
      lastLabelX = x;
    }
  }
  out.push('</g>');
  return out.join('');
}

function nodeRow(run: ScenarioRun, node: string, scale: Scale, y: number, maxRunning: number): string {
  const states = spans(entriesOf(run, 'node-state').filter((e) => e.node === node), run.durationMs);
  const pods = spans(entriesOf(run, 'pods').filter((e) => e.node === node), run.durationMs);
  const out: string[] = [`<g class="node-row" data-node="${esc(node)}">`];
  out.push(rowLabel(y + STATE_H - 4, node, 'node-label'));
  out.push(rowLabel(y + STATE_H + 2 + PODS_H - 2, 'pods running', 'pods-label', 9, COLOUR.muted));
  for (const s of states) if (s.to > s.from) out.push(segment(node, s, scale, y));
  if (pods.length > 0) out.push(podsRow(node, pods, scale, y + STATE_H + 2, maxRunning));
  // Lease renewals as ticks along the bar's foot: a gap in them is a node that stopped renewing.
  const leases = entriesOf(run, 'lease').filter((e) => e.node === node);
  if (leases.length > 0) {
    const d = leases.map((e) => `M${px(scale.x(e.t))},${px(y + STATE_H - 4)}v4`).join('');
    out.push(`<path class="lease-ticks" data-count="${leases.length}" d="${d}" stroke="#ffffff" stroke-width="1"><title>${esc(`${node}: ${leases.length} Lease renewals`)}</title></path>`);
  }
  const mid = y + STATE_H / 2;
  for (const e of entriesOf(run, 'node-deleted')) {
    if (e.node !== node) continue;
    const x = scale.x(e.t);
    const d = `M${px(x - 5)},${px(mid - 5)}L${px(x + 5)},${px(mid + 5)}M${px(x + 5)},${px(mid - 5)}L${px(x - 5)},${px(mid + 5)}`;
    out.push(
      `<g class="deleted-marker" data-t="${e.t}"><title>${esc(`${node} deleted at ${at(e.t)} (uid ${e.uid})`)}</title>` +
        `<path d="${d}" stroke="#ffffff" stroke-width="4"/><path d="${d}" stroke="${COLOUR.deleted}" stroke-width="2"/></g>`,
    );
  }
  let labelEnd = -Infinity;
  for (const e of entriesOf(run, 'node-registered')) {
    // A first registration is the start of the row; only a comeback needs a mark.
    if (e.node !== node || !e.again) continue;
    const x = scale.x(e.t);
    const d = `M${px(x)},${px(mid - 7)}L${px(x + 6)},${px(mid)}L${px(x)},${px(mid + 7)}L${px(x - 6)},${px(mid)}Z`;
    out.push(
      `<g class="reregistered-marker" data-t="${e.t}"><title>${esc(`${node} re-registered at ${at(e.t)} (uid ${e.uid})`)}</title>` +
        `<path d="${d}" fill="${COLOUR.reregistered}" stroke="#ffffff" stroke-width="1.5"/></g>`,
    );
    // Written out beside the mark: in a sped-up run the deletion and the comeback are a pixel
    // apart, and the diamond alone would hide the ✕ and the gap without saying what happened.
    const gone = entriesOf(run, 'node-deleted').filter((g) => g.node === node && g.t <= e.t).pop();
    const words = gone ? `re-registered ${at(e.t - gone.t)} after its deletion` : 're-registered';
    const w = words.length * CHAR_W * 0.9;
    const anchorEnd = x + 9 + w > scale.right;
    const start = anchorEnd ? x - 9 - w : x + 9;
    if (start < labelEnd + 4) continue;
    labelEnd = start + w;
    out.push(
      text(anchorEnd ? x - 9 : x + 9, mid + 3.5, words, `class="reregistered-label" font-size="9" font-weight="700" fill="${COLOUR.reregistered}" stroke="#ffffff" stroke-width="3" paint-order="stroke"${anchorEnd ? ' text-anchor="end"' : ''}`),
    );
  }
  out.push('</g>');
  return out.join('');
}

/** A row of point marks on a grid line: its label with the count, then one mark per entry. */
function markRow<E extends { t: number }>(name: string, entries: E[], scale: Scale, y: number, mark: (e: E, x: number, mid: number) => string): string {
  const mid = y + EVENTS_H / 2;
  const out: string[] = [`<g class="${name}-row">`, rowLabel(mid + 4, `${name} (${entries.length})`, `${name}-label`, 11)];
  out.push(`<line x1="${px(scale.left)}" y1="${px(mid)}" x2="${px(scale.right)}" y2="${px(mid)}" stroke="${COLOUR.grid}"/>`);
  for (const e of entries) out.push(mark(e, scale.x(e.t), mid));
  out.push('</g>');
  return out.join('');
}

function eventsRow(run: ScenarioRun, scale: Scale, y: number): string {
  return markRow('events', entriesOf(run, 'event'), scale, y, (e, x, mid) => {
    const warning = e.type === 'Warning';
    // Warnings differ in shape as well as colour, for readers who cannot tell the colours apart.
    const shape = warning
      ? `<path d="M${px(x)},${px(mid - 5)}L${px(x + 5)},${px(mid + 4)}L${px(x - 5)},${px(mid + 4)}Z" fill="${COLOUR.eventWarning}"/>`
      : `<circle cx="${px(x)}" cy="${px(mid)}" r="3.5" fill="${COLOUR.eventNormal}"/>`;
    return `<g class="event-marker event-${warning ? 'Warning' : 'Normal'}" data-type="${esc(e.type)}" data-reason="${esc(e.reason)}" data-t="${e.t}"><title>${esc(`${e.reason}: ${e.message} (${e.object})`)}</title>${shape}</g>`;
  });
}

/** Pods waiting with no node to run on: a band while there are any, with the count. */
function unscheduledRow(run: ScenarioRun, scale: Scale, y: number): string {
  const waiting = spans(entriesOf(run, 'unscheduled'), run.durationMs).filter((s) => s.entry.count > 0);
  const out: string[] = ['<g class="unscheduled-row">', rowLabel(y + PODS_H - 2, 'pods unscheduled', 'unscheduled-label', 9, COLOUR.muted)];
  out.push(`<line x1="${px(scale.left)}" y1="${px(y + PODS_H)}" x2="${px(scale.right)}" y2="${px(y + PODS_H)}" stroke="${COLOUR.grid}"/>`);
  let lastLabelX = -Infinity;
  for (const s of waiting) {
    const x = scale.x(s.from);
    const w = Math.max(0.5, scale.x(s.to) - x);
    out.push(`<rect class="unscheduled" data-count="${s.entry.count}" x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${PODS_H}" fill="${COLOUR.unscheduled}"><title>${esc(`${s.entry.count} pod${s.entry.count === 1 ? '' : 's'} with no node from ${at(s.from)} to ${at(s.to)}`)}</title></rect>`);
    if (x - lastLabelX >= 14) {
      out.push(text(x + 2, y + PODS_H - 2, String(s.entry.count), `class="unscheduled-count" font-size="9" fill="${COLOUR.text}"`));
      lastLabelX = x;
    }
  }
  out.push('</g>');
  return out.join('');
}

/** Who holds each leader-election Lease: a mark at every change of holder. */
function leadersRow(run: ScenarioRun, scale: Scale, y: number): string {
  return markRow('leaders', entriesOf(run, 'leader'), scale, y, (e, x, mid) =>
    `<g class="leader-marker" data-lease="${esc(e.lease)}" data-holder="${esc(e.holder)}" data-t="${e.t}"><title>${esc(`${e.lease}: ${e.member ? `member ${e.member}` : e.holder || 'released'} at ${at(e.t)}`)}</title>` +
      `<rect x="${px(x - 3)}" y="${px(mid - 3)}" width="6" height="6" fill="${COLOUR.leader}" transform="rotate(45 ${px(x)} ${px(mid)})"/></g>`,
  );
}

function logStripRow(strip: LogStrip, scale: Scale, y: number, bucketMs: number, scaleMax: number): string {
  let busiest = 0;
  for (const b of strip.buckets.values()) busiest = Math.max(busiest, b.count);
  const out: string[] = [`<g class="log-strip" data-process="${esc(strip.process)}" data-total="${strip.total}" data-max="${busiest}">`];
  out.push(`<title>${esc(`${strip.process}: ${lines(strip.total)} logged, at most ${busiest} per ${bucketLabel(bucketMs)}`)}</title>`);
  out.push(rowLabel(y + LOG_H - 5, strip.process, 'log-label', 11));
  out.push(`<line x1="${px(scale.left)}" y1="${px(y + LOG_H)}" x2="${px(scale.right)}" y2="${px(y + LOG_H)}" stroke="${COLOUR.grid}"/>`);
  for (const [index, b] of [...strip.buckets.entries()].sort((p, q) => p[0] - q[0])) {
    const from = index * bucketMs;
    const x = scale.x(from);
    const w = Math.max(0.5, scale.x(from + bucketMs) - x - (bucketMs / scale.durationMs) * (scale.right - scale.left) * 0.15);
    // A single line still shows: a pixel is the difference between "quiet" and "silent".
    const h = Math.max(1, (b.count / scaleMax) * (LOG_H - 2));
    const ph = b.problems > 0 ? Math.max(1, (b.problems / b.count) * h) : 0;
    const tip = `${strip.process}: ${lines(b.count)} from ${at(from)} to ${at(from + bucketMs)}` + (b.problems > 0 ? ` (${b.problems} warning/error)` : '') + `, e.g. "${clip(b.sample, 160)}"`;
    out.push(
      `<g class="log-bucket" data-count="${b.count}" data-problems="${b.problems}"><title>${esc(tip)}</title>` +
        `<rect x="${px(x)}" y="${px(y + LOG_H - h)}" width="${px(w)}" height="${px(h)}" fill="${COLOUR.log}"/>` +
        (ph > 0 ? `<rect x="${px(x)}" y="${px(y + LOG_H - h)}" width="${px(w)}" height="${px(ph)}" fill="${COLOUR.logProblem}"/>` : '') +
        '</g>',
    );
  }
  out.push(text(scale.right + 6, y + LOG_H - 5, lines(strip.total), `class="log-total" font-size="11" fill="${COLOUR.text}"`));
  out.push('</g>');
  return out.join('');
}

function faultMarks(placements: FaultPlacement[], top: number, axisY: number, bottom: number): string {
  return placements
    .map(({ fault, x, lane, anchorEnd, label }) => {
      const ly = top + (lane + 1) * FAULT_LANE_H - 3;
      const tip = `fault at ${at(fault.t)}: ${fault.label} (${fault.action} ${fault.target})`;
      return (
        `<g class="fault" data-action="${esc(fault.action)}" data-target="${esc(fault.target)}" data-t="${fault.t}"><title>${esc(tip)}</title>` +
        `<line class="fault-marker" x1="${px(x)}" y1="${px(ly + 2)}" x2="${px(x)}" y2="${px(bottom)}" stroke="${COLOUR.fault}" stroke-width="1.5" stroke-dasharray="5 3"/>` +
        text(anchorEnd ? x - 3 : x + 3, ly, label, `class="fault-label" font-size="10" fill="${COLOUR.fault}"${anchorEnd ? ' text-anchor="end"' : ''}`) +
        `<line x1="${px(x - 3)}" y1="${px(axisY)}" x2="${px(x + 3)}" y2="${px(axisY)}" stroke="${COLOUR.fault}" stroke-width="2"/></g>`
      );
    })
    .join('');
}

function stepMarks(run: ScenarioRun, scale: Scale, axisY: number): string {
  return entriesOf(run, 'step')
    .map((s) => {
      const x = scale.x(s.t);
      return `<g class="step" data-label="${esc(s.label)}" data-t="${s.t}"><title>${esc(`step at ${at(s.t)}: ${s.label}`)}</title><line class="step-marker" x1="${px(x)}" y1="${px(axisY)}" x2="${px(x)}" y2="${px(axisY + 6)}" stroke="${COLOUR.step}" stroke-width="2" stroke-opacity="0.7"/></g>`;
    })
    .join('');
}

function svgSummary(run: ScenarioRun): string {
  const faults = entriesOf(run, 'fault').length;
  return (
    `Timeline of the ${run.mode} run of scenario ${run.scenario}: ${run.nodes.length} node${run.nodes.length === 1 ? '' : 's'}, ` +
    `${faults} fault${faults === 1 ? '' : 's'}, ${entriesOf(run, 'event').length} events over ${at(run.durationMs)}; ${run.passed ? 'passed' : 'failed'}`
  );
}

/** One run's timeline as inline SVG text (no xmlns: it is meant for an HTML page, which needs none). */
export function renderTimelineSvg(run: ScenarioRun, opts: TimelineSvgOptions): string {
  const sorted = sortedRun(run);
  const widthPx = Math.max(LABEL_W + RIGHT_W + 100, Math.round(opts.widthPx));
  const scale = scaleFor(widthPx, Math.max(opts.durationMs, 1));
  const bucketMs = logBucketMs(scale.durationMs);
  const strips = logStrips(sorted, bucketMs);
  const scaleMax = Math.max(1, opts.logScaleMax ?? busiestBucket(strips));
  let maxRunning = 1;
  for (const p of entriesOf(sorted, 'pods')) maxRunning = Math.max(maxRunning, p.running);

  const placements = placeFaults(entriesOf(sorted, 'fault'), scale, widthPx);
  const lanes = placements.reduce((n, p) => Math.max(n, p.lane + 1), 0);
  const top = 4;
  const axisY = top + lanes * FAULT_LANE_H + AXIS_H;
  let y = axisY + 8;
  const rows: string[] = [];
  for (const node of sorted.nodes) {
    rows.push(nodeRow(sorted, node, scale, y, maxRunning));
    y += STATE_H + 2 + PODS_H + NODE_GAP;
  }
  rows.push(unscheduledRow(sorted, scale, y));
  y += PODS_H + NODE_GAP;
  rows.push(eventsRow(sorted, scale, y));
  y += EVENTS_H + 2;
  rows.push(leadersRow(sorted, scale, y));
  y += EVENTS_H + NODE_GAP;
  if (opts.logs !== false) {
    rows.push(
      `<g class="log-header">${text(scale.left, y + 11, `log lines per ${bucketLabel(bucketMs)} (full height = ${scaleMax} lines; orange = warnings/errors)`, `font-size="10" fill="${COLOUR.muted}"`)}${rowLabel(y + 11, 'logs', 'log-heading', 11)}</g>`,
    );
    y += LOG_HEADER_H;
    for (const strip of strips) {
      rows.push(logStripRow(strip, scale, y, bucketMs, scaleMax));
      y += LOG_H + LOG_GAP;
    }
  }
  const bottom = y;
  const height = bottom + 6;

  const label = svgSummary(sorted);
  const out: string[] = [
    `<svg class="timeline" data-mode="${esc(run.mode)}" role="img" aria-label="${esc(label)}" viewBox="0 0 ${widthPx} ${px(height)}" width="100%" preserveAspectRatio="xMinYMin meet" font-family="${FONT}" font-size="11">`,
    `<title>${esc(label)}</title>`,
    `<rect class="background" x="0" y="0" width="${widthPx}" height="${px(height)}" fill="#ffffff"/>`,
  ];
  if (run.durationMs < scale.durationMs) {
    // A shorter run ends before the shared axis does: grey out the rest so "nothing" reads as "over".
    const x = scale.x(run.durationMs);
    out.push(
      `<rect class="after-end" x="${px(x)}" y="${px(axisY)}" width="${px(scale.right - x)}" height="${px(bottom - axisY)}" fill="${COLOUR.afterEnd}"><title>${esc(`run ended at ${at(run.durationMs)}`)}</title></rect>`,
    );
  }
  out.push(axis(scale, axisY, bottom));
  out.push(...rows);
  out.push(stepMarks(sorted, scale, axisY));
  out.push(faultMarks(placements, top, axisY, bottom));
  out.push('</svg>');
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// HTML

const SVG_WIDTH = 960;

const CSS = `
*{box-sizing:border-box}
body{margin:0 auto;max-width:1100px;padding:1rem;font-family:system-ui,-apple-system,sans-serif;color:#1a1a1a;background:#fff;line-height:1.45}
h1{font-size:1.5rem;margin:.2rem 0}
h2{font-size:1.25rem;margin:0 0 .4rem;display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95em}
.description{margin:.2rem 0 1rem;color:#333}
section.run{border:1px solid #c8c8c8;border-radius:6px;padding:.8rem;margin:1rem 0}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:4px;font-size:.85rem;font-weight:700;letter-spacing:.03em}
.badge.pass,td.pass{color:#0b4f14;background:#e3f4e5}
.badge.fail,td.fail{color:#8e0f0f;background:#fde6e6}
.badge.pass{border:1px solid #0b4f14}.badge.fail{border:1px solid #8e0f0f}
.facts{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;margin:0 0 .5rem;padding:0;list-style:none;color:#333}
.run-error{color:#8e0f0f;background:#fde6e6;border-left:4px solid #8e0f0f;padding:.4rem .6rem;white-space:pre-wrap;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
figure{margin:.5rem 0}
svg.timeline{display:block;width:100%;min-width:640px;height:auto}
.legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.4rem 0;padding:0;list-style:none;font-size:.85rem;color:#333}
.legend li{display:flex;align-items:center;gap:.3rem}
.swatch{display:inline-block;width:1.1rem;height:.8rem;border-radius:2px}
.glyph{font-weight:700;width:1.1rem;text-align:center}
table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:.92rem}
caption{text-align:left;font-weight:700;padding:.2rem 0}
th,td{border:1px solid #d0d0d0;padding:.25rem .45rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.result{white-space:nowrap;font-weight:700}
tr.warning td{background:#fff4e5}
details{margin:.4rem 0}
summary{cursor:pointer;font-weight:600}
`;

/** Legend keys by the class of the mark that draws them (a state segment's class is its key). */
const LEGEND_KEY_OF_CLASS: Record<string, string> = {
  'taint-marker': 'taint',
  'reregistered-marker': 'reregistered',
  'deleted-marker': 'node-deleted',
  'pods-step': 'pods',
  unscheduled: 'unscheduled',
  fault: 'fault',
  step: 'step',
  'event-Normal': 'event-Normal',
  'event-Warning': 'event-Warning',
  'leader-marker': 'leader',
  'lease-ticks': 'lease',
  'log-bucket': 'log',
};

/**
 * What a chart draws, as legend keys, read off the chart itself: a legend entry for a mark the
 * reader will not find sends them looking for it, and a second account of what gets drawn drifts.
 */
function drawnKinds(svg: string): Set<string> {
  const drawn = new Set<string>();
  for (const m of svg.matchAll(/ class="([^"]+)"/g)) {
    for (const c of m[1]!.split(' ')) {
      const key = c.startsWith('state-') ? c : LEGEND_KEY_OF_CLASS[c];
      if (key) drawn.add(key);
    }
  }
  if (/class="log-bucket" data-count="\d+" data-problems="[1-9]/.test(svg)) drawn.add('log-problem');
  return drawn;
}

/** The legend of one run's chart: only what it draws. */
function legend(svg: string): string {
  const drawn = drawnKinds(svg);
  const items: string[] = [];
  for (const [state, style] of Object.entries(STATE_STYLE)) {
    if (!drawn.has(`state-${state}`)) continue;
    const border = style.stroke === 'none' ? '' : `;border:1px ${style.dashed ? 'dashed' : 'solid'} ${style.stroke}`;
    items.push(`<li data-legend="state-${state}"><span class="swatch" style="background:${style.fill}${border}"></span>${esc(style.meaning)}</li>`);
  }
  const item = (key: string, html: string) => {
    if (drawn.has(key)) items.push(`<li data-legend="${key}">${html}</li>`);
  };
  const glyph = (key: string, colour: string, g: string, meaning: string) => item(key, `<span class="glyph" style="color:${colour}" aria-hidden="true">${g}</span>${meaning}`);
  item('taint', `<span class="swatch" style="background:${COLOUR.taint};height:.3rem"></span>tainted (band on top)`);
  glyph('reregistered', COLOUR.reregistered, '◆', 're-registered (Node deleted and created again)');
  glyph('node-deleted', COLOUR.deleted, '✕', 'Node deleted');
  item('pods', `<span class="swatch" style="background:${COLOUR.pods};border-top:2px solid ${COLOUR.podsLine}"></span>pods running (count)`);
  item('unscheduled', `<span class="swatch" style="background:${COLOUR.unscheduled}"></span>pods with no node to run on (count)`);
  glyph('fault', COLOUR.fault, '┆', 'fault');
  glyph('step', COLOUR.step, '╷', 'step');
  glyph('event-Normal', COLOUR.eventNormal, '●', 'Normal event');
  glyph('event-Warning', COLOUR.eventWarning, '▲', 'Warning event');
  glyph('leader', COLOUR.leader, '◆', 'leader change (controllers, scheduler)');
  item('lease', `<span class="swatch" style="background:${STATE_STYLE.Ready.fill};background-image:repeating-linear-gradient(90deg,#fff 0 1px,transparent 1px 5px)"></span>Lease renewals (white ticks)`);
  item('log', `<span class="swatch" style="background:${COLOUR.log}"></span>log lines`);
  item('log-problem', `<span class="swatch" style="background:${COLOUR.logProblem}"></span>warning/error log lines`);
  return items.length === 0 ? '' : `<ul class="legend" aria-label="Legend">${items.join('')}</ul>`;
}

function badge(passed: boolean): string {
  return passed ? '<span class="badge pass">PASSED</span>' : '<span class="badge fail">FAILED</span>';
}

/** Pass or fail as a mark and a word, so it reads the same without colour. */
function resultCell(v: Verdict): string {
  return v.passed ? '<td class="result pass">✓ pass</td>' : '<td class="result fail">✗ fail</td>';
}

function verdictTable(run: ScenarioRun): string {
  if (run.verdicts.length === 0) return '<p class="no-verdicts">No expectations were judged.</p>';
  const rows = run.verdicts.map(
    (v) => `<tr class="verdict ${v.passed ? 'pass' : 'fail'}" data-passed="${v.passed}"><td>${esc(v.expectation)}</td><td>${esc(v.measured)}</td>${resultCell(v)}</tr>`,
  );
  return (
    `<div class="scroll"><table class="verdicts"><caption>Expectations</caption>` +
    `<thead><tr><th scope="col">Expectation</th><th scope="col">Measured</th><th scope="col">Result</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table></div>`
  );
}

function eventsDetails(run: ScenarioRun): string {
  const events = entriesOf(run, 'event');
  const body =
    events.length === 0
      ? '<p>No events.</p>'
      : `<div class="scroll"><table class="events"><thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Reason</th><th scope="col">Object</th><th scope="col">Message</th></tr></thead><tbody>` +
        events
          .map(
            (e) =>
              `<tr class="event ${e.type === 'Warning' ? 'warning' : 'normal'}"><td class="num">${at(e.t)}</td><td>${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${esc(e.object)}</td><td>${esc(e.message)}</td></tr>`,
          )
          .join('') +
        '</tbody></table></div>';
  return `<details class="events"><summary>Events (${events.length})</summary>${body}</details>`;
}

function faultsDetails(run: ScenarioRun): string {
  const entries = run.entries.filter((e): e is EntryOf<'fault'> | EntryOf<'step'> => e.kind === 'fault' || e.kind === 'step');
  const body =
    entries.length === 0
      ? '<p>No faults or steps.</p>'
      : `<div class="scroll"><table class="faults"><thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Label</th><th scope="col">Action</th><th scope="col">Target</th></tr></thead><tbody>` +
        entries
          .map((e) =>
            e.kind === 'fault'
              ? `<tr class="fault-row"><td class="num">${at(e.t)}</td><td>fault</td><td>${esc(e.label)}</td><td>${esc(e.action)}</td><td>${esc(e.target)}</td></tr>`
              : `<tr class="step-row"><td class="num">${at(e.t)}</td><td>step</td><td>${esc(e.label)}</td><td></td><td></td></tr>`,
          )
          .join('') +
        '</tbody></table></div>';
  return `<details class="faults"><summary>Faults and steps (${entries.length})</summary>${body}</details>`;
}

/** Per process: how much it logged and what it said most, since a flood is usually one line repeated. */
function logsDetails(run: ScenarioRun): string {
  const rows = run.processes.map((p) => {
    const own = entriesOf(run, 'log').filter((e) => e.process === p);
    const counts = new Map<string, number>();
    for (const e of own) counts.set(e.msg, (counts.get(e.msg) ?? 0) + 1);
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, 3);
    const said = top.map(([msg, n]) => `${n}× ${esc(clip(msg, 200))}`).join('<br>');
    const problems = own.filter((e) => isProblem(e.level)).length;
    return `<tr data-process="${esc(p)}"><td>${esc(p)}</td><td class="num">${own.length}</td><td class="num">${problems}</td><td>${said}</td></tr>`;
  });
  return (
    `<details class="logs"><summary>Log lines by process</summary><div class="scroll"><table class="logs">` +
    `<thead><tr><th scope="col">Process</th><th scope="col">Lines</th><th scope="col">Warnings/errors</th><th scope="col">Most frequent</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table></div></details>`
  );
}

function speedText(speed: number): string {
  return speed === 1 ? 'real time (speed ×1)' : `speed ×${speed} (upstream timings divided by ${speed})`;
}

function runSection(unsorted: ScenarioRun, svgOpts: TimelineSvgOptions): string {
  const run = sortedRun(unsorted);
  const facts = [speedText(run.speed), `started ${run.startedAt}`, `duration ${(run.durationMs / 1000).toFixed(1)} s`];
  const svg = renderTimelineSvg(run, svgOpts);
  return [
    `<section class="run" data-mode="${esc(run.mode)}" data-passed="${run.passed}">`,
    `<h2><span class="mode">${esc(run.mode)}</span> ${badge(run.passed)}</h2>`,
    `<ul class="facts">${facts.map((f) => `<li>${esc(f)}</li>`).join('')}</ul>`,
    run.error ? `<p class="run-error" role="alert"><strong>Run error:</strong> ${esc(run.error)}</p>` : '',
    `<figure class="timeline"><div class="scroll">${svg}</div><figcaption>${legend(svg)}</figcaption></figure>`,
    verdictTable(run),
    eventsDetails(run),
    faultsDetails(run),
    logsDetails(run),
    '</section>',
  ]
    .filter((s) => s !== '')
    .join('\n');
}

/** With two runs or more: each run's verdicts in a column block of its own, one above the other row by row. */
function summaryTable(runs: ScenarioRun[]): string {
  const head1 = runs.map((r) => `<th scope="colgroup" colspan="2" data-mode="${esc(r.mode)}">${esc(r.mode)} ${badge(r.passed)}</th>`).join('');
  const head2 = runs.map(() => '<th scope="col">Expectation</th><th scope="col">Result</th>').join('');
  const count = runs.reduce((n, r) => Math.max(n, r.verdicts.length), 0);
  const rows: string[] = [];
  for (let i = 0; i < count; i++) {
    const cells = runs.map((r) => {
      const v = r.verdicts[i];
      if (!v) return '<td></td><td></td>';
      const result = `${v.passed ? '✓ pass' : '✗ fail'} <span class="measured">(${esc(v.measured)})</span>`;
      return `<td data-mode="${esc(r.mode)}">${esc(v.expectation)}</td><td class="${v.passed ? 'pass' : 'fail'}" data-passed="${v.passed}">${result}</td>`;
    });
    rows.push(`<tr>${cells.join('')}</tr>`);
  }
  return (
    `<div class="scroll"><table class="summary"><caption>Side by side</caption>` +
    `<colgroup>${runs.map(() => '<col span="2">').join('')}</colgroup>` +
    `<thead><tr>${head1}</tr><tr>${head2}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`
  );
}

/** The scenario's report as one self-contained HTML document; the same report renders the same bytes. */
export function renderReport(report: ScenarioReport): string {
  const durationMs = Math.max(1, ...report.runs.map((r) => r.durationMs));
  // One log scale for every run, so the runs' strips compare by height.
  const bucketMs = logBucketMs(durationMs);
  const logScaleMax = Math.max(1, ...report.runs.map((r) => busiestBucket(logStrips(r, bucketMs))));
  const svgOpts: TimelineSvgOptions = { widthPx: SVG_WIDTH, durationMs, logScaleMax };
  const passed = report.runs.length > 0 && report.runs.every((r) => r.passed);
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(`Scenario ${report.scenario}: ${passed ? 'passed' : 'failed'}`)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    '<header>',
    `<h1>Scenario <code>${esc(report.scenario)}</code></h1>`,
    `<p class="description">${esc(report.description)}</p>`,
    '</header>',
    '<main>',
    report.runs.length === 0 ? '<p>This report has no runs.</p>' : '',
    report.runs.length > 1 ? summaryTable(report.runs) : '',
    ...report.runs.map((r) => runSection(r, svgOpts)),
    '</main>',
    '</body>',
    '</html>',
    '',
  ]
    .filter((s, i, all) => s !== '' || i === all.length - 1)
    .join('\n');
}
