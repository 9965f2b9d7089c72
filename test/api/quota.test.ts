// Quota arithmetic: canonical quantities as upstream prints them, what a pod counts (sidecars, init
// containers, overhead), and the admission check's decisions and messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantityText } from '../../src/api/quantity.js';
import { checkRequest, quotaView, QuotaRefusal } from '../../src/api/quota/check.js';
import { quotaEvaluatorFor } from '../../src/api/quota/evaluators.js';
import { podUsage } from '../../src/api/quota/pod-usage.js';
import { resourceListJson } from '../../src/api/resource-list.js';
import type { KubeObject } from '../../src/api/types.js';

const NOW = Date.UTC(2026, 0, 1);

function quota(name: string, hard: Record<string, string>, used: Record<string, string>, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace: 'ns', resourceVersion: '5' }, spec: { hard, ...spec }, status: { hard, used } };
}

const container = (name: string, requests: Record<string, string>, limits: Record<string, string> = requests, extra: Record<string, unknown> = {}) => ({
  name,
  image: 'x',
  resources: { requests, limits },
  ...extra,
});

describe('canonical quantities', () => {
  it('spells values as upstream Quantity.String() does', () => {
    const cases: [string, string][] = [
      ['1000m', '1'],
      ['1500m', '1500m'],
      ['2000', '2k'],
      ['1.5Gi', '1536Mi'],
      ['1.5Ki', '1536'],
      ['2048Ki', '2Mi'],
      ['0.1', '100m'],
      ['12e6', '12e6'],
      ['0', '0'],
      ['-100m', '-100m'],
    ];
    for (const [input, want] of cases) assert.equal(canonicalQuantityText(input), want, input);
  });
});

describe('pod usage', () => {
  it('counts sidecars with the app containers and a regular init container alone beside earlier sidecars', () => {
    const pod: KubeObject = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [container('sidecar', { cpu: '100m', memory: '64Mi' }, { cpu: '100m', memory: '64Mi' }, { restartPolicy: 'Always' }), container('migrate', { cpu: '2', memory: '1Gi' })],
        containers: [container('app', { cpu: '500m', memory: '256Mi' })],
        overhead: { cpu: '50m' },
      },
    };
    assert.deepEqual(resourceListJson(podUsage(pod, NOW)), {
      'count/pods': '1',
      pods: '1',
      // The init phase (2 CPU beside the 100m sidecar) outweighs the running phase (600m); overhead adds 50m.
      cpu: '2150m',
      'requests.cpu': '2150m',
      'limits.cpu': '2150m',
      memory: '1088Mi',
      'requests.memory': '1088Mi',
      'limits.memory': '1088Mi',
    });
  });

  it('stops charging a finished pod but for count/pods', () => {
    const pod: KubeObject = { metadata: { name: 'p' }, spec: { containers: [container('app', { cpu: '1' })] }, status: { phase: 'Succeeded' } };
    assert.deepEqual(resourceListJson(podUsage(pod, NOW)), { 'count/pods': '1' });
  });
});

describe('the admission check', () => {
  const pods = quotaEvaluatorFor('', 'pods')!;
  const services = quotaEvaluatorFor('', 'services')!;
  const pod = (cpu: string): KubeObject => ({ metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [container('app', { cpu, memory: '1Mi' })] } });

  it('charges what fits to each covering quota, in the first amount format', () => {
    const q = quota('compute', { 'requests.cpu': '2', pods: '10' }, { 'requests.cpu': '500m', pods: '1' });
    const [next] = checkRequest([quotaView(q)], { operation: 'CREATE', subresource: '', object: pod('1'), oldObject: undefined }, pods, NOW);
    assert.deepEqual(resourceListJson(next!), { 'requests.cpu': '1500m', pods: '2' });
  });

  it("refuses with upstream's message, naming only the exceeded resources", () => {
    const q = quota('compute', { 'requests.cpu': '1', pods: '10' }, { 'requests.cpu': '500m', pods: '1' });
    assert.throws(
      () => checkRequest([quotaView(q)], { operation: 'CREATE', subresource: '', object: pod('600m'), oldObject: undefined }, pods, NOW),
      (e: Error) => e instanceof QuotaRefusal && e.message === 'exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1',
    );
  });

  it('refuses while a quota has not been counted yet', () => {
    const q = quota('compute', { pods: '10' }, {});
    assert.throws(
      () => checkRequest([quotaView(q)], { operation: 'CREATE', subresource: '', object: pod('1'), oldObject: undefined }, pods, NOW),
      (e: Error) => e.message === 'status unknown for quota: compute, resources: pods',
    );
  });

  it('charges an update only what it adds: a Service turned NodePort takes node ports', () => {
    const q = quota('svc', { services: '5', 'services.nodeports': '1' }, { services: '1', 'services.nodeports': '0' });
    const old: KubeObject = { metadata: { name: 's', namespace: 'ns', resourceVersion: '3' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }, { port: 81 }] } };
    const cur: KubeObject = { ...old, spec: { type: 'NodePort', ports: [{ port: 80 }, { port: 81 }] } };
    assert.throws(
      () => checkRequest([quotaView(q)], { operation: 'UPDATE', subresource: '', object: cur, oldObject: old }, services, NOW),
      (e: Error) => e.message === 'exceeded quota: svc, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1',
    );
    const same = checkRequest([quotaView(q)], { operation: 'UPDATE', subresource: '', object: old, oldObject: old }, services, NOW);
    assert.deepEqual(same, [undefined]);
  });

  it('leaves out quotas whose scope the object is not in', () => {
    const q = quota('be', { pods: '0' }, { pods: '0' }, { scopes: ['BestEffort'] });
    assert.deepEqual(checkRequest([quotaView(q)], { operation: 'CREATE', subresource: '', object: pod('1'), oldObject: undefined }, pods, NOW), [undefined]);
  });
});
