// PriorityClass and LimitRange through real kubectl: a namespace's LimitRange fills a pod's
// resources and refuses one above its max with upstream's message, a pod naming a class gets its
// priority, and the two system classes are listed from the server's start.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from '../support/cluster.js';

const MANIFEST = `apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: lr}
spec:
  limits:
  - type: Container
    max: {cpu: "1", memory: 512Mi}
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m, memory: 64Mi}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-high}
value: 1000
description: batch jobs that may preempt
`;

const pod = (name: string, extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: lr}
spec:
  containers:
  - name: app
    image: busybox
${extra}`;

describe('PriorityClass and LimitRange with kubectl', () => {
  const s = new TestServer('prio-limits');
  before(async () => {
    await s.start();
    await s.k(['create', 'namespace', 'lr']);
    await s.k(['apply', '-f', '-'], { input: MANIFEST });
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it("fills a pod's missing requests and limits from the namespace's LimitRange", async () => {
    await s.k(['create', '-f', '-'], { input: pod('defaulted') });
    const got = JSON.parse(await s.k(['-n', 'lr', 'get', 'pod', 'defaulted', '-o', 'json']));
    assert.deepEqual(got.spec.containers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } });
    assert.equal(got.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app');
  });

  it('refuses a pod above the max with upstream message', async () => {
    const r = await s.kubectl(['create', '-f', '-'], { input: pod('greedy', '    resources: {limits: {cpu: "2"}}\n') });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^Error from server \(Forbidden\): error when creating "STDIN": pods "greedy" is forbidden: maximum cpu usage per Container is 1, but limit is 2$/m);
  });

  it('gives a pod naming a PriorityClass its priority', async () => {
    await s.k(['create', '-f', '-'], { input: pod('urgent', '  priorityClassName: batch-high\n') });
    const got = JSON.parse(await s.k(['-n', 'lr', 'get', 'pod', 'urgent', '-o', 'json']));
    assert.equal(got.spec.priority, 1000);
    assert.equal(got.spec.preemptionPolicy, 'PreemptLowerPriority');
  });

  it('lists the system classes with kubectl get pc', async () => {
    const rows = (await s.k(['get', 'pc'])).trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(rows[0], ['NAME', 'VALUE', 'GLOBAL-DEFAULT', 'AGE', 'PREEMPTIONPOLICY']);
    assert.deepEqual(
      rows.slice(1).map((r) => [r[0], r[1], r[2], r[4]]),
      [
        ['batch-high', '1000', 'false', 'PreemptLowerPriority'],
        ['system-cluster-critical', '2000000000', 'false', 'PreemptLowerPriority'],
        ['system-node-critical', '2000001000', 'false', 'PreemptLowerPriority'],
      ],
    );
  });
});
