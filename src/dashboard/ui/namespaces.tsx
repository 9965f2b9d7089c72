// Namespaces, and one namespace up close: its pods with their state and their logs (the node
// panel's log view, followed live), and its Services with what answers behind them.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { NamespaceDetail, NamespaceRow, PodRow } from '../view.js';
import { api } from './live.js';
import { LogView } from './node-panel.js';
import { TableHead } from './table-head.js';

function podsText(r: NamespaceRow): string {
  const parts = [`${r.pods.running} running`];
  if (r.pods.pending) parts.push(`${r.pods.pending} pending`);
  if (r.pods.failed) parts.push(`${r.pods.failed} failed`);
  if (r.pods.succeeded) parts.push(`${r.pods.succeeded} succeeded`);
  if (r.pods.terminating) parts.push(`${r.pods.terminating} terminating`);
  return parts.join(', ');
}

function NamespacePanel({ namespace, onClose }: { namespace: string; onClose(): void }) {
  const [detail, setDetail] = useState<NamespaceDetail | undefined>();
  const [logsOf, setLogsOf] = useState<PodRow | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [namespace]);
  useEffect(() => {
    let stop = false;
    setDetail(undefined);
    setLogsOf(undefined);
    // As the node panel does: asked again every 2 s while open, so the page never holds every pod.
    const load = async () => {
      const r = await api<NamespaceDetail>(`api/namespaces/${encodeURIComponent(namespace)}`).catch(() => undefined);
      if (!stop && r && Array.isArray(r.body.pods)) setDetail(r.body);
    };
    void load();
    const t = setInterval(() => void load(), 2000);
    return () => {
      stop = true;
      clearInterval(t);
    };
  }, [namespace]);
  return (
    <section class="namespace-panel" aria-labelledby="ns-panel-h" data-namespace={namespace}>
      <div class="panel-head">
        <h3 id="ns-panel-h" tabIndex={-1} ref={heading}>
          Namespace {namespace}
        </h3>
        <button type="button" onClick={onClose} aria-label="Close the namespace panel">
          Close
        </button>
      </div>
      {!detail ? (
        <p class="empty">Loading…</p>
      ) : (
        <>
          <h4>Pods ({detail.pods.length})</h4>
          {detail.pods.length === 0 ? (
            <p class="empty">No pods in this namespace.</p>
          ) : (
            <table class="pods">
              <TableHead columns={['name', 'node', 'phase', 'ready', 'restarts', { hidden: 'actions' }]} />
              <tbody>
                {detail.pods.map((p) => (
                  <tr key={p.name} data-pod={`${p.namespace}/${p.name}`}>
                    <td>{p.name}</td>
                    <td>{p.node ?? 'not scheduled'}</td>
                    <td>{p.terminating ? 'Terminating' : p.phase}</td>
                    <td>{p.ready}</td>
                    <td>{p.restarts}</td>
                    <td class="row-actions">
                      <button type="button" disabled={!p.node} onClick={() => setLogsOf(p)} aria-label={`Logs of ${p.name}`}>
                        Logs
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h4>Services ({detail.services.length})</h4>
          {detail.services.length === 0 ? (
            <p class="empty">No Services in this namespace.</p>
          ) : (
            <table class="services">
              <TableHead columns={['name', 'type', 'cluster IP', 'ports', 'state']} />
              <tbody>
                {detail.services.map((s) => (
                  <tr key={s.name} data-service={`${s.namespace}/${s.name}`}>
                    <td>{s.name}</td>
                    <td>{s.type}</td>
                    <td>{s.clusterIP || '—'}</td>
                    <td>{s.ports || '—'}</td>
                    <td class={s.ready > 0 || s.type === 'ExternalName' || s.state === 'no selector' ? 'ok' : 'bad'}>{s.state}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
      {logsOf && <LogView pod={logsOf} onClose={() => setLogsOf(undefined)} />}
    </section>
  );
}

export function Namespaces({ rows, forbidden }: { rows: NamespaceRow[]; forbidden: string[] }) {
  const [open, setOpen] = useState<string | undefined>();
  return (
    <section class="panel namespaces" aria-labelledby="ns-h">
      <h2 id="ns-h">Namespaces</h2>
      {forbidden.length > 0 && <p class="forbidden">Not shown: {forbidden.join('; ')}</p>}
      {rows.length === 0 ? (
        <p class="empty">No namespaces listed.</p>
      ) : (
        <table>
          <TableHead columns={['namespace', 'phase', 'pods', 'Services']} />
          <tbody>
            {rows.map((r) => (
              <tr key={r.name} data-namespace={r.name} class={open === r.name ? 'selected' : ''}>
                <td>
                  <button type="button" class="link" aria-expanded={open === r.name} onClick={() => setOpen(open === r.name ? undefined : r.name)}>
                    {r.name}
                  </button>
                </td>
                <td class={r.phase === 'Terminating' ? 'bad' : ''}>{r.phase || '—'}</td>
                <td class={r.pods.pending || r.pods.failed ? 'bad' : ''}>{podsText(r)}</td>
                <td>{r.services}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open !== undefined && <NamespacePanel namespace={open} onClose={() => setOpen(undefined)} />}
    </section>
  );
}
