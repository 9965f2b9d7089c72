import { servedKinds } from '../../src/apiextensions/served-kinds.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { podResource } from '../../src/api/kinds/pod.js';
import { nodeResource } from '../../src/api/kinds/node.js';
import { serviceResource } from '../../src/api/kinds/service.js';
import { eventResource } from '../../src/api/kinds/event.js';
import { endpointsResource } from '../../src/api/kinds/endpoints.js';
import { deploymentResource } from '../../src/api/kinds/deployment.js';
import { podDisruptionBudgetResource } from '../../src/api/kinds/poddisruptionbudget.js';
import { daemonSetResource } from '../../src/api/kinds/daemonset.js';
import { humanDuration } from '../../src/api/kinds/printing.js';

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

function pod(status: Record<string, unknown>, extra: { spec?: Record<string, unknown>; deletionTimestamp?: string } = {}): KubeObject {
  return {
    metadata: { name: 'web', namespace: 'default', creationTimestamp: ago(5 * M), ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}) },
    spec: { containers: [{ name: 'app', image: 'nginx' }], nodeName: 'node-a', ...extra.spec },
    status,
  };
}

function podCells(p: KubeObject): (string | number | boolean | null)[] {
  return podResource.table.cells(p, NOW);
}

test('human durations follow upstream HumanDuration', () => {
  const cases: [number, string][] = [
    [-5 * S, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [45 * S, '45s'],
    [119 * S, '119s'],
    [5 * M, '5m'],
    [5 * M + 30 * S, '5m30s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H + 9 * M, '3h9m'],
    [7 * H, '7h'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [5 * D + 3 * H, '5d3h'],
    [8 * D + 3 * H, '8d'],
    [400 * D, '400d'],
    [3 * 365 * D + 120 * D, '3y120d'],
    [9 * 365 * D, '9y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms}ms`);
});

test('pod table: running, pending, creating', () => {
  const running = pod({
    phase: 'Running',
    podIP: '10.0.0.5',
    containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: { startedAt: ago(4 * M) } } }],
  });
  assert.deepEqual(podCells(running), ['web', '1/1', 'Running', '0', '5m', '10.0.0.5', 'node-a', '<none>', '<none>']);
  const pending = pod({ phase: 'Pending' }, { spec: { nodeName: undefined } });
  assert.deepEqual(podCells(pending), ['web', '0/1', 'Pending', '0', '5m', '<none>', '<none>', '<none>', '<none>']);
  const creating = pod({ phase: 'Pending', containerStatuses: [{ name: 'app', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] });
  assert.equal(podCells(creating)[2], 'ContainerCreating');
});

test('pod table: CrashLoopBackOff shows restarts with the last one', () => {
  const crashing = pod({
    phase: 'Running',
    containerStatuses: [
      {
        name: 'app',
        ready: false,
        restartCount: 5,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(2 * M + 10 * S) } },
      },
    ],
  });
  const cells = podCells(crashing);
  assert.equal(cells[1], '0/1');
  assert.equal(cells[2], 'CrashLoopBackOff');
  assert.equal(cells[3], '5 (2m10s ago)');
});

test('pod table: Completed, Terminating, Init:0/1, Init:Error, SchedulingGated', () => {
  const done = pod({ phase: 'Succeeded', containerStatuses: [{ name: 'app', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }] });
  assert.deepEqual(podCells(done).slice(1, 4), ['0/1', 'Completed', '0']);
  const deleting = pod(
    { phase: 'Running', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: {} } }] },
    { deletionTimestamp: ago(0) },
  );
  assert.deepEqual(podCells(deleting).slice(1, 3), ['1/1', 'Terminating']);
  const doneDeleting = pod({ phase: 'Succeeded', containerStatuses: [] }, { deletionTimestamp: ago(0) });
  assert.equal(podCells(doneDeleting)[2], 'Succeeded');
  const lost = pod({ phase: 'Running', reason: 'NodeLost' }, { deletionTimestamp: ago(0) });
  assert.equal(podCells(lost)[2], 'Unknown');
  const init = pod(
    {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'setup', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
      containerStatuses: [{ name: 'app', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
    },
    { spec: { initContainers: [{ name: 'setup', image: 'busybox' }] } },
  );
  assert.deepEqual(podCells(init).slice(1, 3), ['0/1', 'Init:0/1']);
  const initFailed = pod(
    { phase: 'Pending', initContainerStatuses: [{ name: 'setup', ready: false, restartCount: 2, state: { terminated: { exitCode: 1, reason: 'Error' } } }] },
    { spec: { initContainers: [{ name: 'setup', image: 'busybox' }] } },
  );
  assert.deepEqual(podCells(initFailed).slice(2, 4), ['Init:Error', '2']);
  const gated = pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] });
  assert.equal(podCells(gated)[2], 'SchedulingGated');
  const sidecar = pod(
    {
      phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }, { type: 'Ready', status: 'True' }],
      initContainerStatuses: [{ name: 'proxy', ready: true, started: true, restartCount: 0, state: { running: {} } }],
      containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: {} } }],
    },
    { spec: { initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }] } },
  );
  assert.deepEqual(podCells(sidecar).slice(1, 3), ['2/2', 'Running']);
});

test('node table: status and roles', () => {
  const node = (labels: Record<string, string>, ready: string | undefined, unschedulable = false): KubeObject => ({
    metadata: { name: 'node-a', labels, creationTimestamp: ago(5 * D + 3 * H) },
    spec: { unschedulable },
    status: {
      ...(ready ? { conditions: [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status: ready }] } : {}),
      nodeInfo: { kubeletVersion: 'v1.32.0', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'skiff://0.1.0' },
      addresses: [{ type: 'InternalIP', address: '10.0.0.10' }, { type: 'Hostname', address: 'node-a' }],
    },
  });
  assert.deepEqual(nodeResource.table.cells(node({ 'node-role.kubernetes.io/control-plane': '' }, 'True'), NOW), [
    'node-a', 'Ready', 'control-plane', '5d3h', 'v1.32.0', '10.0.0.10', '<none>', 'Debian GNU/Linux 12', '6.1.0', 'skiff://0.1.0',
  ]);
  assert.deepEqual(nodeResource.table.cells(node({}, 'True', true), NOW).slice(1, 3), ['Ready,SchedulingDisabled', '<none>']);
  assert.equal(nodeResource.table.cells(node({}, 'Unknown'), NOW)[1], 'NotReady');
  assert.equal(nodeResource.table.cells(node({}, undefined), NOW)[1], 'Unknown');
  const roles = node({ 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/control-plane': 'true', 'kubernetes.io/role': 'edge' }, 'True');
  assert.equal(nodeResource.table.cells(roles, NOW)[2], 'control-plane,edge,worker');
});

test('service, endpoints, event, deployment, daemonset and pdb cells', () => {
  const svc: KubeObject = {
    metadata: { name: 'web', creationTimestamp: ago(2 * H) },
    spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, protocol: 'TCP' }, { port: 443, nodePort: 30443, protocol: 'TCP' }], selector: { app: 'web' } },
  };
  assert.deepEqual(serviceResource.table.cells(svc, NOW), ['web', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP,443:30443/TCP', '120m', 'app=web']);
  const headless: KubeObject = { metadata: { name: 'h' }, spec: { type: 'ClusterIP', clusterIP: 'None' } };
  assert.deepEqual(serviceResource.table.cells(headless, NOW), ['h', 'ClusterIP', 'None', '<none>', '<none>', '<unknown>', '<none>']);
  const lb: KubeObject = { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', ports: [] }, status: { loadBalancer: {} } };
  assert.equal(serviceResource.table.cells(lb, NOW)[3], '<pending>');

  const ep: KubeObject = {
    metadata: { name: 'kubernetes' },
    subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '10.0.0.3' }, { ip: '10.0.0.4' }], ports: [{ port: 6443 }] }],
  };
  assert.equal(endpointsResource.table.cells(ep, NOW)[1], '10.0.0.1:6443,10.0.0.2:6443,10.0.0.3:6443 + 1 more...');
  assert.equal(endpointsResource.table.cells({ metadata: { name: 'e' } }, NOW)[1], '<none>');

  const ev: KubeObject = {
    metadata: { name: 'web.17a', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{app}' },
    reason: 'Pulled',
    message: ' Successfully pulled image \n',
    type: 'Normal',
    source: { component: 'kubelet', host: 'node-a' },
    firstTimestamp: ago(10 * M),
    lastTimestamp: ago(30 * S),
    count: 3,
  };
  assert.deepEqual(eventResource.table.cells(ev, NOW), ['30s', 'Normal', 'Pulled', 'pod/web', 'spec.containers{app}', 'kubelet, node-a', 'Successfully pulled image', '10m', 3, 'web.17a']);

  const deploy: KubeObject = {
    metadata: { name: 'web', creationTimestamp: ago(3 * D) },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'envoy' }] } } },
    status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
  };
  assert.deepEqual(deploymentResource.table.cells(deploy, NOW), ['web', '2/3', 3, 2, '3d', 'a,b', 'nginx,envoy', 'app=web']);

  const ds: KubeObject = {
    metadata: { name: 'agent' },
    spec: { selector: { matchLabels: { app: 'agent' } }, template: { spec: { nodeSelector: { 'kubernetes.io/os': 'linux' }, containers: [{ name: 'a', image: 'i' }] } } },
    status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 },
  };
  assert.deepEqual(daemonSetResource.table.cells(ds, NOW), ['agent', 3, 3, 2, 3, 2, 'kubernetes.io/os=linux', '<unknown>', 'a', 'i', 'app=agent']);

  const pdb: KubeObject = { metadata: { name: 'p' }, spec: { minAvailable: '50%' }, status: { disruptionsAllowed: 1 } };
  assert.deepEqual(podDisruptionBudgetResource.table.cells(pdb, NOW), ['p', '50%', 'N/A', 1, '<unknown>']);
});

test('every kind prints a bare or malformed object without crashing', () => {
  const weird: KubeObject[] = [
    { metadata: { name: 'bare' } },
    { metadata: { name: 'bad-types', creationTimestamp: 'not a date', labels: { 'node-role.kubernetes.io/x': '' } }, spec: 'nope', status: 42, subsets: {}, data: [] },
    { metadata: { name: 'null-fields' }, spec: { containers: null, selector: null, ports: [null, 7] }, status: { containerStatuses: [null, { state: null }], conditions: 'x' } },
  ];
  for (const rt of servedKinds) {
    for (const o of weird) {
      const cells = rt.table.cells(structuredClone(o), NOW);
      assert.equal(cells.length, rt.table.columns.length, `${rt.resource} ${o.metadata.name}`);
      for (const c of cells) assert.ok(['string', 'number', 'boolean'].includes(typeof c) || c === null, `${rt.resource} cell ${String(c)}`);
    }
    // Defaulting and validation must not throw on the same shapes either.
    for (const o of weird) {
      const copy = structuredClone(o);
      rt.defaults(copy);
      rt.prepareForCreate?.(copy);
      assert.ok(Array.isArray(rt.validate(copy, undefined)));
      assert.ok(Array.isArray(rt.validate(copy, structuredClone(o))));
    }
  }
});

test('column definitions are well-formed', () => {
  for (const rt of servedKinds) {
    assert.ok(rt.table.columns.some((c) => c.format === 'name'), `${rt.resource} has a name column`);
    for (const c of rt.table.columns) assert.ok(c.description.length > 0 && (c.priority === 0 || c.priority === 1));
  }
  assert.deepEqual(podResource.table.columns.map((c) => `${c.name}${c.priority ? '*' : ''}`), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP*', 'Node*', 'Nominated Node*', 'Readiness Gates*']);
  assert.deepEqual(eventResource.table.columns.map((c) => `${c.name}${c.priority ? '*' : ''}`), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject*', 'Source*', 'Message', 'First Seen*', 'Count*', 'Name*']);
});
