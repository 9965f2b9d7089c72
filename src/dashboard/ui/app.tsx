// The page: a header with the cluster's counts and the stream's state, the node list beside the
// selected node's panel, then the timeline, control plane, workloads, namespaces and warnings.
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ActionRequest, ActionResult } from '../view.js';
import { api, connect, emptyState, type LiveState } from './live.js';
import { NodePanel } from './node-panel.js';
import { NodeList, nodeCounts } from './nodes.js';
import { Namespaces } from './namespaces.js';
import { ControlPlane, Timeline, Warnings, Workloads } from './panels.js';

interface Notice {
  id: number;
  ok: boolean;
  text: string;
}

const CONTROL_PLANE_RESOURCES = ['the kubernetes endpoints', 'kube-system leases', 'the autoscaler status'];
const WORKLOAD_RESOURCES = ['deployments', 'statefulsets', 'daemonsets', 'jobs'];
const NAMESPACE_RESOURCES = ['namespaces', 'pods', 'services'];

function App() {
  const [state, setState] = useState<LiveState>(emptyState);
  const [selected, setSelected] = useState<string | undefined>();
  const [notices, setNotices] = useState<Notice[]>([]);
  const [tick, setTick] = useState(0);
  useEffect(() => connect((f) => setState(f)), []);
  // Ages move on by themselves: one re-render a second.
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, []);
  const now = Date.now() + state.clockOffset;
  const act = useCallback(async (a: ActionRequest, label: string): Promise<ActionResult> => {
    let result: ActionResult;
    try {
      result = (await api<ActionResult>('api/actions', { method: 'POST', body: JSON.stringify(a) })).body;
    } catch (e) {
      result = { ok: false, message: String(e) };
    }
    const id = Date.now() + Math.random();
    setNotices((n) => [...n.slice(-4), { id, ok: result.ok, text: result.ok ? result.message : `${label}: ${result.message}` }]);
    setTimeout(() => setNotices((n) => n.filter((x) => x.id !== id)), result.ok ? 6000 : 20000);
    return result;
  }, []);
  const counts = nodeCounts(state.nodes);
  const tile = selected ? state.nodes.get(selected) : undefined;
  const forbidden = (names: string[]) => names.filter((n) => state.forbidden[n]).map((n) => `${n}: ${state.forbidden[n]}`);
  const summary: [string, number, string][] = [
    ['Ready', counts.Ready, 'Ready'],
    ['NotReady', counts.NotReady, 'NotReady'],
    ['Unknown', counts.Unknown, 'Unknown'],
    ['absent', counts.absent, 'absent'],
    ['cordoned', counts.cordoned, 'cordoned'],
    ['retiring', counts.retiring, 'retiring'],
    ['running', counts.running, 'pods running'],
    ['pending', counts.pending, 'pending'],
    ['unscheduled', state.unscheduled, 'unscheduled'],
  ];
  return (
    <>
      <header class="top">
        <h1>skiff</h1>
        <p class="who">
          {state.server ? (
            <>
              {state.server} as <strong>{state.user || 'unknown'}</strong>
            </>
          ) : (
            'connecting…'
          )}
        </p>
        <p class={`connection ${state.connection}`} role="status" data-connection={state.connection}>
          {state.connection === 'live' ? '● live' : state.connection === 'reconnecting' ? '○ reconnecting…' : '○ connecting…'}
        </p>
      </header>
      <ul class="summary" aria-label="cluster summary">
        {summary.map(([key, count, label]) => (
          <li key={key} class={`health-${key}`} data-count-of={key}>
            <strong>{count}</strong> {label}
          </li>
        ))}
      </ul>
      <div class="notices" aria-live="polite">
        {notices.map((n) => (
          <p key={n.id} class={n.ok ? 'notice ok' : 'notice bad'} role={n.ok ? 'status' : 'alert'}>
            {n.text}
          </p>
        ))}
      </div>
      <main>
        <div class={`nodes-area${tile ? ' with-panel' : ''}`}>
          <NodeList nodes={state.nodes} version={state.nodesVersion} now={now} selected={selected} onSelect={setSelected} forbidden={state.forbidden.nodes} />
          {tile && <NodePanel tile={tile} now={now} act={act} onClose={() => setSelected(undefined)} />}
        </div>
        <Timeline
          entries={state.timeline}
          nowT={now - state.startedAt}
          tick={Math.floor(tick / 2)}
          listed={state.listed}
          nodesForbidden={state.forbidden.nodes !== undefined}
          nodes={state.nodes.size}
        />
        <div class="columns">
          <ControlPlane cp={state.controlPlane} now={now} forbidden={forbidden(CONTROL_PLANE_RESOURCES)} />
          <Workloads rows={state.workloads} act={act} forbidden={forbidden(WORKLOAD_RESOURCES)} />
        </div>
        <Namespaces rows={state.namespaces} forbidden={forbidden(NAMESPACE_RESOURCES)} />
        <Warnings events={state.warnings} now={now} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
