// LimitRange validation and the LimitRanger plugin: defaults land on containers (with the
// annotation saying so), and pods outside the bounds are refused with upstream's messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyContainerDefaults, limitRanger, limitViolations, LIMIT_RANGER_ANNOTATION } from '../../src/apiserver/admission/limit-ranger.js';
import { limitRangeResource, type LimitRange, type LimitRangeItem } from '../../src/api/kinds/limitrange.js';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { KubeObject } from '../../src/api/types.js';

function lr(...limits: LimitRangeItem[]): LimitRange {
  const o: LimitRange = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr', namespace: 'default' }, spec: { limits } };
  limitRangeResource.defaults(o);
  return o;
}

function pod(...containers: Record<string, unknown>[]): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers } };
}

test('container defaults fill what is missing and are recorded', () => {
  const p = pod({ name: 'a', image: 'i' }, { name: 'b', image: 'i', resources: { requests: { cpu: '50m' }, limits: { cpu: '100m' } } });
  applyContainerDefaults(p, [lr({ type: 'Container', default: { cpu: '200m', memory: '128Mi' }, defaultRequest: { cpu: '100m', memory: '64Mi' } })]);
  const cs = (p.spec as { containers: { resources: unknown }[] }).containers;
  assert.deepEqual(cs[0]!.resources, { limits: { cpu: '200m', memory: '128Mi' }, requests: { cpu: '100m', memory: '64Mi' } });
  assert.deepEqual(cs[1]!.resources, { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '100m', memory: '128Mi' } });
  assert.equal(
    p.metadata.annotations![LIMIT_RANGER_ANNOTATION],
    'LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; memory request for container b; memory limit for container b',
  );
});

test('app containers come before init containers, in the annotation and in refusals, as upstream', () => {
  const p = pod({ name: 'app', image: 'i', resources: { limits: { cpu: '2' } } });
  (p.spec as Record<string, unknown>).initContainers = [{ name: 'setup', image: 'i', resources: { limits: { cpu: '3' } } }];
  const range = lr({ type: 'Container', max: { cpu: '1' } });
  applyContainerDefaults(p, [range]);
  assert.equal(p.metadata.annotations![LIMIT_RANGER_ANNOTATION], 'LimitRanger plugin set: cpu request for container app; cpu request for init container setup');
  assert.deepEqual(limitViolations(p, [range]), ['maximum cpu usage per Container is 1, but limit is 2', 'maximum cpu usage per Container is 1, but limit is 3']);
});

test('a max alone becomes the default limit and request', () => {
  const range = lr({ type: 'Container', max: { cpu: '1' } });
  assert.deepEqual(range.spec!.limits![0], { type: 'Container', max: { cpu: '1' }, default: { cpu: '1' }, defaultRequest: { cpu: '1' } });
});

test('bounds are enforced with upstream messages', () => {
  const range = [lr({ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '2' } })];
  const errs = (c: Record<string, unknown>) => limitViolations(pod({ name: 'a', image: 'i', ...c }), range);
  assert.deepEqual(errs({ resources: { requests: { cpu: '50m' }, limits: { cpu: '100m' } } }), ['minimum cpu usage per Container is 100m, but request is 50m']);
  assert.deepEqual(errs({ resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }), ['maximum cpu usage per Container is 1, but limit is 2']);
  assert.deepEqual(errs({ resources: { requests: { cpu: '200m' }, limits: { cpu: '1' } } }), ['cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000']);
  assert.deepEqual(errs({ resources: { requests: { cpu: '500m' }, limits: { cpu: '1' } } }), []);
  const podRange = [lr({ type: 'Pod', max: { memory: '1Gi' } })];
  assert.deepEqual(limitViolations(pod({ name: 'a', image: 'i', resources: { limits: { memory: '1Gi' } } }), podRange), []);
  assert.deepEqual(limitViolations(pod({ name: 'a', image: 'i' }), podRange), ['maximum memory usage per Pod is 1Gi.  No limit is specified']);
});

test('the plugin refuses with a 403 naming the pod', () => {
  const plugin = limitRanger({ inNamespace: () => [lr({ type: 'Container', max: { cpu: '1' } })] });
  const object = pod({ name: 'a', image: 'i', resources: { limits: { cpu: '2' } } });
  const a = { operation: 'CREATE' as const, resource: resourceTypeFor('', 'v1', 'pods')!, subresource: '', namespace: 'default', name: 'p', object, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false };
  plugin.mutate!(a);
  assert.throws(() => plugin.validate!(a), (e: Error & { status?: { code?: number } }) => e.message === 'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2' && e.status?.code === 403);
});

test('LimitRange validation', () => {
  const msgs = (...items: LimitRangeItem[]) => limitRangeResource.validate(lr(...items), undefined).map((c) => `${c.field}: ${c.message}`);
  assert.deepEqual(msgs({ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }), [
    'spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1',
    'spec.limits[0].defaultRequest[cpu]: Invalid value: 1: min value 2 is greater than default request value 1',
    'spec.limits[0].default[cpu]: Invalid value: 1: min value 2 is greater than default value 1',
  ]);
  assert.deepEqual(msgs({ type: 'Pod', default: { cpu: '1' } }), ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]);
  assert.deepEqual(msgs({ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }), ['spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: 500m: ratio 500m is less than 1']);
  assert.deepEqual(msgs({ type: 'Container', max: { cpu: 'lots' } }).length > 0, true);
});

test('a Pod bound counts sidecars with the app containers and spells quantities as upstream prints them', () => {
  const p = pod({ name: 'app', image: 'i', resources: { requests: { memory: '512Mi' }, limits: { cpu: '1500m', memory: '512Mi' } } });
  (p.spec as Record<string, unknown>).initContainers = [
    { name: 'proxy', image: 'i', restartPolicy: 'Always', resources: { requests: { memory: '1024Mi' }, limits: { cpu: '500m', memory: '1024Mi' } } },
  ];
  // 1536Mi of memory and 2 CPUs together: the sidecar runs beside the app, it is not an init phase.
  assert.deepEqual(limitViolations(p, [lr({ type: 'Pod', max: { cpu: '2000m', memory: '1Gi' } })]), ['maximum memory usage per Pod is 1Gi, but limit is 1536Mi']);
  assert.deepEqual(limitViolations(p, [lr({ type: 'Pod', max: { cpu: '1000m', memory: '2Gi' } })]), ['maximum cpu usage per Pod is 1, but limit is 2']);
});
