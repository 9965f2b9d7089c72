// PriorityClass and LimitRange through a real server: the system classes it makes at start, their
// refusal to be deleted, and both admission plugins acting on pods created through the API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { isStatusError } from '../../src/api/errors.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(isStatusError(e, 'Forbidden'), String(e));
    return e.message;
  }
  assert.fail('expected a refusal');
}

const pod = (name: string, extra: Record<string, unknown> = {}, resources?: unknown) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }], ...extra },
});

describe('PriorityClass and LimitRange through the API', () => {
  let s: InProcessServer;
  before(async () => {
    s = await startInProcessServer();
  });
  after(async () => {
    await s.stop();
  });

  it('serves the two system classes from start and refuses to delete them, naming the group', async () => {
    const c = s.client();
    const list = await c.get<KubeList<KubeObject & { value?: number }>>('/apis/scheduling.k8s.io/v1/priorityclasses');
    assert.deepEqual(
      list.items.map((pc) => [pc.metadata.name, pc.value]),
      [['system-cluster-critical', 2000000000], ['system-node-critical', 2000001000]],
    );
    assert.equal(
      await refusal(c.delete('/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical')),
      'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
  });

  it('gives a pod naming a class its value and policy', async () => {
    const c = s.client();
    await c.create('/apis/scheduling.k8s.io/v1/priorityclasses', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'batch' }, value: 500, preemptionPolicy: 'Never' });
    const created = await c.create<{ spec: Record<string, unknown> }>('/api/v1/namespaces/default/pods', pod('prio', { priorityClassName: 'batch' }));
    assert.equal(created.spec.priority, 500);
    assert.equal(created.spec.preemptionPolicy, 'Never');
    const plain = await c.create<{ spec: Record<string, unknown> }>('/api/v1/namespaces/default/pods', pod('plain'));
    assert.equal(plain.spec.priority, 0);
  });

  it("fills a pod's resources from its namespace's LimitRange and refuses one above max", async () => {
    const c = s.client();
    await c.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'limited' } });
    await c.create('/api/v1/namespaces/limited/limitranges', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'lr' },
      spec: { limits: [{ type: 'Container', max: { cpu: '1' }, default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '250m' } }] },
    });
    const created = await c.create<{ metadata: { annotations?: Record<string, string> }; spec: { containers: { resources: unknown }[] } }>('/api/v1/namespaces/limited/pods', pod('defaulted'));
    assert.deepEqual(created.spec.containers[0]!.resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '128Mi' } });
    assert.equal(created.metadata.annotations?.['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c');
    assert.equal(
      await refusal(c.create('/api/v1/namespaces/limited/pods', pod('big', {}, { limits: { cpu: '2' } }))),
      'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    );
  });

  it('names the group of a grouped kind refused in a terminating namespace', async () => {
    const c = s.client();
    await c.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'leaving' } });
    // No namespace controller runs here: the namespace stays Terminating.
    await c.delete('/api/v1/namespaces/leaving');
    assert.equal(
      await refusal(
        c.create('/apis/apps/v1/namespaces/leaving/deployments', {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd' },
          spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
        }),
      ),
      'deployments.apps "d" is forbidden: unable to create new content in namespace leaving because it is being terminated',
    );
  });
});
