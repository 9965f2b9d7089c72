// One node up close: what its row says in full, its pods, and what can be done to it — each
// button one request made with the dashboard user's credentials, its refusal shown as the API
// worded it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { DASHBOARD_HEADER, type ActionRequest, type ActionResult, type NodeTile, type PodRow } from '../view.js';
import { ago, bytes, cores } from './format.js';
import { TableHead } from './table-head.js';
import { api } from './live.js';
import { StateBadge } from './nodes.js';

export type Act = (a: ActionRequest, label: string) => Promise<ActionResult>;

function Confirmed({ label, confirm, onRun, disabled }: { label: string; confirm: string; onRun(): void; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={confirm}>
      <span>{confirm}</span>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          onRun();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function LogView({ pod, onClose }: { pod: PodRow; onClose(): void }) {
  const [container, setContainer] = useState(pod.containers[0] ?? '');
  const [text, setText] = useState('');
  const [error, setError] = useState('');
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const ac = new AbortController();
    setText('');
    setError('');
    void (async () => {
      const q = new URLSearchParams({ namespace: pod.namespace, pod: pod.name, container, follow: '1', tailLines: '500' });
      try {
        const res = await fetch(`api/logs?${q}`, { headers: { [DASHBOARD_HEADER]: '1' }, signal: ac.signal });
        if (!res.ok || !res.body) {
          const body = (await res.json().catch(() => ({ message: res.statusText }))) as { message?: string };
          setError(body.message ?? res.statusText);
          return;
        }
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          // Keep the last 200 KB: a chatty container followed for an hour stays readable.
          setText((t) => (t + value).slice(-200_000));
        }
      } catch (e) {
        if (!ac.signal.aborted) setError(String(e));
      }
    })();
    return () => ac.abort();
  }, [pod.namespace, pod.name, container]);
  useEffect(() => {
    const el = pre.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <section class="logs" aria-label={`logs of ${pod.namespace}/${pod.name}`}>
      <div class="panel-head">
        <h3>
          Logs of {pod.namespace}/{pod.name} <span class="sub">(following)</span>
        </h3>
        {pod.containers.length > 1 && (
          <label>
            Container{' '}
            <select value={container} onChange={(e) => setContainer((e.currentTarget as HTMLSelectElement).value)}>
              {pod.containers.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="button" onClick={onClose}>
          Close logs
        </button>
      </div>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : (
        <pre ref={pre} class="log-text" tabIndex={0}>
          {text || '(no output yet)'}
        </pre>
      )}
    </section>
  );
}

export function NodePanel({ tile, now, act, onClose }: { tile: NodeTile; now: number; act: Act; onClose(): void }) {
  const [pods, setPods] = useState<PodRow[]>([]);
  const [logsOf, setLogsOf] = useState<PodRow | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [tile.name]);
  useEffect(() => {
    let stop = false;
    const load = async () => {
      const r = await api<PodRow[]>(`api/nodes/${encodeURIComponent(tile.name)}/pods`).catch(() => undefined);
      if (!stop && r && Array.isArray(r.body)) setPods(r.body);
    };
    void load();
    const t = setInterval(() => void load(), 2000);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, [tile.name]);
  const absent = tile.health === 'absent';
  return (
    <section class="panel node-panel" aria-labelledby="node-panel-h" data-node={tile.name}>
      <div class="panel-head">
        <h2 id="node-panel-h" tabIndex={-1} ref={heading}>
          Node {tile.name}
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the node panel">
          Close
        </button>
      </div>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <StateBadge tile={tile} now={now} />
          {tile.since !== undefined && <span class="sub"> since {ago(now - tile.since)} ago</span>}
          {tile.reason && <div class="reason">{tile.reason}</div>}
          {absent && tile.absentSince !== undefined && <div class="reason">its Node object was deleted {ago(now - tile.absentSince)} ago</div>}
        </dd>
        <dt>Roles</dt>
        <dd>{tile.roles.join(', ') || '—'}</dd>
        <dt>Lease</dt>
        <dd>{tile.leaseRenewedAt === undefined ? 'none' : `renewed ${ago(now - tile.leaseRenewedAt)} ago, ${tile.renewalsPerMinute} time${tile.renewalsPerMinute === 1 ? '' : 's'} in the last minute`}</dd>
        <dt>Re-registrations</dt>
        <dd>{tile.reregistrations}</dd>
        <dt>Taints</dt>
        <dd>{tile.taints.length ? tile.taints.join(', ') : 'none'}</dd>
        <dt>Requested</dt>
        <dd>
          cpu {cores(tile.cpu.requested)} of {cores(tile.cpu.allocatable)}, memory {bytes(tile.memory.requested)} of {bytes(tile.memory.allocatable)}
        </dd>
        <dt>Instance</dt>
        <dd>{tile.providerID ?? 'not a cloud instance'}</dd>
      </dl>
      <div class="actions" role="group" aria-label="Node actions">
        {tile.cordoned ? (
          <button type="button" disabled={absent} onClick={() => void act({ action: 'uncordon', node: tile.name }, `Uncordon ${tile.name}`)}>
            Uncordon
          </button>
        ) : (
          <button type="button" disabled={absent} onClick={() => void act({ action: 'cordon', node: tile.name }, `Cordon ${tile.name}`)}>
            Cordon
          </button>
        )}
        <Confirmed label="Drain" confirm={`Evict every pod of ${tile.name}?`} disabled={absent} onRun={() => void act({ action: 'drain', node: tile.name }, `Drain ${tile.name}`)} />
        <Confirmed label="Retire" confirm={`Retire ${tile.name}? Its agent drains it, removes its Node and does not come back.`} disabled={absent || tile.retiring} onRun={() => void act({ action: 'retire', node: tile.name }, `Retire ${tile.name}`)} />
      </div>
      <h3>Pods ({pods.length})</h3>
      {pods.length === 0 ? (
        <p class="empty">No pods on this node.</p>
      ) : (
        <table class="pods">
          <TableHead columns={['namespace/name', 'phase', 'ready', 'restarts', { hidden: 'actions' }]} />
          <tbody>
            {pods.map((p) => (
              <tr key={`${p.namespace}/${p.name}`} data-pod={`${p.namespace}/${p.name}`}>
                <td>
                  {p.namespace}/{p.name}
                </td>
                <td>{p.terminating ? 'Terminating' : p.phase}</td>
                <td>{p.ready}</td>
                <td>{p.restarts}</td>
                <td class="row-actions">
                  <button type="button" onClick={() => setLogsOf(p)} aria-label={`Logs of ${p.name}`}>
                    Logs
                  </button>
                  <button type="button" class="danger" onClick={() => void act({ action: 'delete-pod', namespace: p.namespace, pod: p.name }, `Delete pod ${p.name}`)} aria-label={`Delete pod ${p.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {logsOf && <LogView pod={logsOf} onClose={() => setLogsOf(undefined)} />}
    </section>
  );
}
