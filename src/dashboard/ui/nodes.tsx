// Nodes at a glance: a row per node, problems first, in a list that draws only the rows in view
// (5,000 nodes are 5,000 rows of data and about thirty of DOM).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { NodeHealth, NodeTile } from '../view.js';
import { ago, bytes, cores, percent } from './format.js';

const ROW_H = 44;
/** Rows drawn beyond the visible ones, so a quick scroll shows no gap. */
const OVERSCAN = 6;

type Show = 'all' | 'problems' | 'cordoned' | 'absent';
type Order = 'problems' | 'name';

const HEALTH_RANK: Record<NodeHealth, number> = { absent: 0, Unknown: 1, NotReady: 2, Ready: 3 };

function isProblem(n: NodeTile): boolean {
  return n.health !== 'Ready' || n.cordoned || n.retiring;
}

function visible(n: NodeTile, show: Show, filter: string): boolean {
  if (filter && !n.name.includes(filter)) return false;
  if (show === 'problems') return isProblem(n);
  if (show === 'cordoned') return n.cordoned;
  if (show === 'absent') return n.health === 'absent';
  return true;
}

/** How long a node that came back says so on its row. */
const RETURN_SHOWN_MS = 60_000;

export function StateBadge({ tile, now }: { tile: NodeTile; now?: number }) {
  return (
    <span class="badges">
      <span class={`badge health-${tile.health}`}>{tile.health}</span>
      {tile.cordoned && <span class="badge cordoned">SchedulingDisabled</span>}
      {tile.retiring && <span class="badge retiring">retiring</span>}
      {now !== undefined && tile.returnedAt !== undefined && now - tile.returnedAt < RETURN_SHOWN_MS && (
        <span class="badge returned" title="its Node was deleted and its agent re-created it">
          back {ago(now - tile.returnedAt)} ago
        </span>
      )}
    </span>
  );
}

function Meter({ label, used, total, text }: { label: string; used: number; total: number; text: string }) {
  const p = percent(used, total);
  return (
    <span class="meter" title={`${label}: ${text}`}>
      <span class="meter-bar" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={p}>
        <span class={`meter-fill${p >= 90 ? ' high' : ''}`} style={{ width: `${p}%` }} />
      </span>
      <span class="meter-text">{text}</span>
    </span>
  );
}

function NodeRow({ tile, top, now, selected, onSelect }: { tile: NodeTile; top: number; now: number; selected: boolean; onSelect(name: string): void }) {
  const lease = tile.leaseRenewedAt === undefined ? 'no Lease' : `${ago(now - tile.leaseRenewedAt)} ago`;
  const p = tile.pods;
  const describe = `${tile.name}: ${tile.health}${tile.cordoned ? ', cordoned' : ''}${tile.retiring ? ', retiring' : ''}; ${p.running} pods running`;
  return (
    <div class="node-item" role="listitem" style={{ top: `${top}px` }}>
      <button
        type="button"
        class={`node-line${selected ? ' selected' : ''}`}
        data-node={tile.name}
        data-health={tile.health}
        data-cordoned={String(tile.cordoned)}
        aria-label={describe}
        aria-pressed={selected}
        onClick={() => onSelect(tile.name)}
      >
        <span class="c-name">
          <span class="node-name">{tile.name}</span>
          {tile.roles.length > 0 && <span class="roles">{tile.roles.join(', ')}</span>}
        </span>
        <span class="c-state">
          <StateBadge tile={tile} now={now} />
        </span>
        <span class="c-lease" title={`Lease renewed ${lease}; ${tile.renewalsPerMinute} renewals in the last minute`}>
          {lease}
          <span class="sub">{tile.renewalsPerMinute}/min</span>
        </span>
        <span class="c-pods" title={`${p.running} running, ${p.pending} pending, ${p.terminating} terminating, ${p.succeeded} succeeded, ${p.failed} failed`}>
          <span class="pods-running">{p.running}</span>
          {p.pending > 0 && <span class="pods-pending"> +{p.pending} pending</span>}
          {p.terminating > 0 && <span class="pods-terminating"> {p.terminating} terminating</span>}
          {p.failed > 0 && <span class="pods-failed"> {p.failed} failed</span>}
        </span>
        <span class="c-res">
          <Meter label="cpu requested" used={tile.cpu.requested} total={tile.cpu.allocatable} text={`${cores(tile.cpu.requested)}/${cores(tile.cpu.allocatable)}`} />
          <Meter label="memory requested" used={tile.memory.requested} total={tile.memory.allocatable} text={`${bytes(tile.memory.requested)}/${bytes(tile.memory.allocatable)}`} />
        </span>
        <span class="c-rereg reregistrations" data-count={tile.reregistrations} title={`re-created by its agent ${tile.reregistrations} times after it was deleted`}>
          {tile.reregistrations > 0 ? `↻ ${tile.reregistrations}` : ''}
        </span>
        <span class="c-taints" title={tile.taints.join('\n')}>
          {tile.taints.length > 0 ? `${tile.taints.length} taint${tile.taints.length === 1 ? '' : 's'}` : ''}
        </span>
      </button>
    </div>
  );
}

export function NodeList({ nodes, version, now, selected, onSelect, forbidden }: { nodes: Map<string, NodeTile>; version: number; now: number; selected?: string; onSelect(name: string): void; forbidden?: string }) {
  const [filter, setFilter] = useState('');
  const [show, setShow] = useState<Show>('all');
  const [order, setOrder] = useState<Order>('problems');
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const rows = useMemo(() => {
    const list = [...nodes.values()].filter((n) => visible(n, show, filter));
    return list.sort((a, b) => (order === 'problems' ? HEALTH_RANK[a.health] - HEALTH_RANK[b.health] || Number(b.cordoned) - Number(a.cordoned) : 0) || a.name.localeCompare(b.name));
  }, [version, show, filter, order]);
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_H) + OVERSCAN);
  return (
    <section class="panel nodes" aria-labelledby="nodes-h">
      <div class="panel-head">
        <h2 id="nodes-h">Nodes</h2>
        <div class="controls">
          <label>
            Find <input type="search" value={filter} placeholder="node name" onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value.trim())} />
          </label>
          <label>
            Show{' '}
            <select value={show} onChange={(e) => setShow((e.currentTarget as HTMLSelectElement).value as Show)}>
              <option value="all">all</option>
              <option value="problems">not Ready, cordoned or retiring</option>
              <option value="cordoned">cordoned</option>
              <option value="absent">absent</option>
            </select>
          </label>
          <label>
            Order{' '}
            <select value={order} onChange={(e) => setOrder((e.currentTarget as HTMLSelectElement).value as Order)}>
              <option value="problems">problems first</option>
              <option value="name">by name</option>
            </select>
          </label>
        </div>
      </div>
      {forbidden && (
        <p class="forbidden" role="note">
          Nodes cannot be shown: {forbidden}
        </p>
      )}
      <div class="node-head" aria-hidden="true">
        <span class="c-name">name</span>
        <span class="c-state">state</span>
        <span class="c-lease">Lease</span>
        <span class="c-pods">pods</span>
        <span class="c-res">cpu · memory requested</span>
        <span class="c-rereg">re-registered</span>
        <span class="c-taints">taints</span>
      </div>
      <div ref={box} class="node-scroll" onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}>
        <div class="node-list" role="list" aria-label={`${rows.length} nodes`} style={{ height: `${rows.length * ROW_H}px` }}>
          {rows.slice(first, last).map((n, i) => (
            <NodeRow key={n.name} tile={n} top={(first + i) * ROW_H} now={now} selected={n.name === selected} onSelect={onSelect} />
          ))}
        </div>
        {rows.length === 0 && <p class="empty">{nodes.size === 0 ? 'No nodes yet.' : 'No node matches.'}</p>}
      </div>
    </section>
  );
}

/** Counts by state and pods by phase, for the header. */
export function nodeCounts(nodes: Map<string, NodeTile>): Record<NodeHealth | 'cordoned' | 'retiring' | 'running' | 'pending', number> {
  const c = { Ready: 0, NotReady: 0, Unknown: 0, absent: 0, cordoned: 0, retiring: 0, running: 0, pending: 0 };
  for (const n of nodes.values()) {
    c[n.health]++;
    if (n.cordoned) c.cordoned++;
    if (n.retiring) c.retiring++;
    c.running += n.pods.running;
    c.pending += n.pods.pending;
  }
  return c;
}
