// Preemption end to end: a real server and a real agent (simulated runtime, 2 CPUs). A pod of a
// higher PriorityClass that fits nowhere evicts the least important lower-priority pod, runs in its
// place, and the victim carries upstream's DisruptionTarget condition and Preempted event; a pod
// with preemptionPolicy Never waits instead, and says so.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { TestServer, TestAgent, TEST_JOIN_TOKEN, eventually } from '../support/cluster.js';

const CLASSES = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: polite}
value: 1000
preemptionPolicy: Never
`;

const pod = (name: string, priorityClass: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  priorityClassName: ${priorityClass}
  containers:
  - name: app
    image: busybox
    resources: {requests: {cpu: "1"}}
`;

interface PodJson {
  metadata: { uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase?: string; nominatedNodeName?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe('preemption with a real agent', () => {
  const s = new TestServer('preemption');
  const agent = new TestAgent(s, 'small');
  const get = async (name: string): Promise<PodJson | undefined> => {
    const r = await s.kubectl(['get', 'pod', name, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as PodJson) : undefined;
  };
  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN]);
    await agent.start(['--runtime', 'simulated', '--cpu', '2', '--memory', '4Gi']);
    await s.k(['apply', '-f', '-'], { input: CLASSES });
    for (const name of ['old', 'young']) {
      await s.k(['create', '-f', '-'], { input: pod(name, 'low') });
      await eventually(async () => (await get(name))?.status.phase === 'Running', 20_000, `${name} Running`);
    }
  });
  after(async () => {
    await agent.stop().catch(() => {});
    await s.stop();
    s.cleanup();
  });

  it('keeps a full node for a pod that may not preempt, saying why', async () => {
    await s.k(['create', '-f', '-'], { version: '1.27', input: pod('waits', 'polite') });
    const scheduled = await eventually(async () => (await get('waits'))?.status.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'), 20_000, 'waits to be reported unschedulable');
    assert.equal(scheduled.message, '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.');
    assert.equal((await get('old'))?.status.phase, 'Running');
    await s.k(['delete', 'pod', 'waits', '--wait=false']);
  });

  it('evicts the lower-priority pod that started last and runs the urgent one in its place', async () => {
    await s.k(['create', '-f', '-'], { input: pod('urgent', 'high') });
    const urgent = await eventually(async () => {
      const p = await get('urgent');
      return p?.status.phase === 'Running' && p.spec.nodeName === 'small' ? p : undefined;
    }, 30_000, 'the urgent pod Running on the node');
    // The pod running longer is the more important of two equals: the younger one made room.
    assert.equal((await get('old'))?.status.phase, 'Running');
    assert.equal(await get('young'), undefined);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const events = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedEvent({ namespace: 'default', fieldSelector: 'reason=Preempted' });
    assert.deepEqual(
      events.items.map((e) => [e.involvedObject.name, e.message]),
      [['young', `Preempted by pod ${urgent.metadata.uid} on node small`]],
    );
  });
});
