// The other panels: the live timeline (the scenario report's picture), the control plane, the
// workloads and the recent warnings.
import { useMemo, useState } from 'preact/hooks';
import { renderTimelineSvg } from '../../scenarios/report.js';
import type { TimelineEntry } from '../../scenarios/timeline.js';
import { liveRun, timelineCaption } from '../live-timeline.js';
import { TIMELINE_WINDOW_MS, type ControlPlaneView, type LeaderLock, type WarningEvent, type WorkloadRow } from '../view.js';
import { ago } from './format.js';
import { TableHead } from './table-head.js';
import type { Act } from './node-panel.js';

const TIMELINE_ROWS = 40;

export interface TimelineProps {
  entries: TimelineEntry[];
  nowT: number;
  tick: number;
  /** The view's watches have listed: until then there is nothing to draw or to claim. */
  listed: boolean;
  nodesForbidden: boolean;
  nodes: number;
}

export function Timeline({ entries, nowT, tick, listed, nodesForbidden, nodes }: TimelineProps) {
  // Redrawn every couple of seconds (tick), not on every patch: the picture moves with time anyway.
  // The first data redraws at once, so the page does not show the empty picture of before it.
  const { svg, caption } = useMemo(() => {
    const { run, hidden } = liveRun(entries, nowT, TIMELINE_WINDOW_MS, TIMELINE_ROWS);
    const caption = timelineCaption({ listed, nodesForbidden, watchedMs: nowT, windowMs: TIMELINE_WINDOW_MS, nodes, rows: run.nodes.length, hidden });
    return { svg: listed ? renderTimelineSvg(run, { widthPx: 960, durationMs: run.durationMs, logs: false }) : '', caption };
  }, [tick, listed, nodesForbidden]);
  return (
    <section class="panel timeline" aria-labelledby="timeline-h" data-listed={listed ? 'true' : 'false'}>
      <div class="panel-head">
        <h2 id="timeline-h">Timeline</h2>
        <span class="sub timeline-caption">{caption}</span>
      </div>
      {/* The SVG is the report's own text: escaped there, drawn here as is. */}
      {svg !== '' && <div class="timeline-svg" dangerouslySetInnerHTML={{ __html: svg }} />}
    </section>
  );
}

/** Who leads, by member; a Lease no member claims shows its holder identity as it is. */
function leaderText(l: LeaderLock): string {
  if (!l.holder) return 'none (released)';
  return l.member ?? l.holder;
}

export function ControlPlane({ cp, now, forbidden }: { cp: ControlPlaneView; now: number; forbidden: string[] }) {
  return (
    <section class="panel control-plane" aria-labelledby="cp-h">
      <h2 id="cp-h">Control plane</h2>
      {forbidden.length > 0 && <p class="forbidden">Not shown: {forbidden.join('; ')}</p>}
      <table>
        <caption>API server members</caption>
        <TableHead columns={['member', 'listed', 'ready', 'storage', 'endpoint Lease']} />
        <tbody>
          {cp.members.map((m) => (
            <tr key={m.address} data-member={m.address} data-ready={m.ready === 'ok' ? 'true' : 'false'}>
              <td>{m.address}</td>
              <td>{m.listed ? 'yes' : 'no (Lease expired)'}</td>
              <td class={m.ready === 'ok' ? 'ok' : 'bad'}>{m.ready}</td>
              <td class={m.storage === undefined || m.storage === 'ok' ? 'ok' : 'bad'}>{m.storage ?? '—'}</td>
              <td>{m.leaseRenewedAt === undefined ? '—' : `renewed ${ago(now - m.leaseRenewedAt)} ago`}</td>
            </tr>
          ))}
          {cp.members.length === 0 && (
            <tr>
              <td colSpan={5}>no member known yet</td>
            </tr>
          )}
        </tbody>
      </table>
      <table>
        <caption>Leader election</caption>
        <TableHead columns={['Lease', 'leader (member)', 'renewed']} />
        <tbody>
          {cp.leaders.map((l) => (
            <tr key={l.name} data-lease={l.name} data-leader={l.member ?? ''}>
              <td>{l.name}</td>
              {/* The member as the table above names it; the holder identity (hostname_uuid) only when no member says it is theirs. */}
              <td title={l.holder ? `holder identity ${l.holder}` : undefined}>{leaderText(l)}</td>
              <td>{l.renewedAt === undefined ? '—' : `${ago(now - l.renewedAt)} ago`}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {cp.autoscalerStatus !== undefined && (
        <details>
          <summary>Cluster autoscaler status</summary>
          <pre class="autoscaler-status">{cp.autoscalerStatus}</pre>
        </details>
      )}
    </section>
  );
}

function ScaleControl({ w, act }: { w: WorkloadRow; act: Act }) {
  const [replicas, setReplicas] = useState(String(w.desired));
  const id = `scale-${w.kind}-${w.namespace}-${w.name}`;
  return (
    <form
      class="scale"
      onSubmit={(e) => {
        e.preventDefault();
        void act({ action: 'scale', kind: w.kind, namespace: w.namespace, name: w.name, replicas: Number(replicas) }, `Scale ${w.name} to ${replicas}`);
      }}
    >
      <label for={id} class="visually-hidden">
        replicas of {w.name}
      </label>
      <input id={id} type="number" min={0} step={1} value={replicas} onInput={(e) => setReplicas((e.currentTarget as HTMLInputElement).value)} />
      <button type="submit">Scale</button>
    </form>
  );
}

export function Workloads({ rows, act, forbidden }: { rows: WorkloadRow[]; act: Act; forbidden: string[] }) {
  return (
    <section class="panel workloads" aria-labelledby="wl-h">
      <h2 id="wl-h">Workloads</h2>
      {forbidden.length > 0 && <p class="forbidden">Not shown: {forbidden.join('; ')}</p>}
      {rows.length === 0 ? (
        <p class="empty">No Deployments, StatefulSets, DaemonSets or Jobs.</p>
      ) : (
        <table>
          <TableHead columns={['kind', 'namespace/name', 'ready', 'state', 'scale']} />
          <tbody>
            {rows.map((w) => (
              <tr key={`${w.kind}/${w.namespace}/${w.name}`} data-workload={`${w.kind}/${w.namespace}/${w.name}`}>
                <td>{w.kind}</td>
                <td>
                  {w.namespace}/{w.name}
                </td>
                <td class={w.ready >= w.desired ? 'ok' : 'bad'}>
                  {w.ready}/{w.desired}
                </td>
                <td>{w.state}</td>
                <td>{w.scalable ? <ScaleControl w={w} act={act} /> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Warnings({ events, now }: { events: WarningEvent[]; now: number }) {
  return (
    <section class="panel warnings" aria-labelledby="warn-h">
      <h2 id="warn-h">Recent warnings</h2>
      {events.length === 0 ? (
        <p class="empty">None.</p>
      ) : (
        <ul>
          {events.map((e) => (
            <li key={e.id}>
              <span class="sub">{ago(now - e.at)} ago</span> <strong>{e.reason}</strong> {e.object}
              {e.count > 1 ? ` (×${e.count})` : ''}: {e.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
