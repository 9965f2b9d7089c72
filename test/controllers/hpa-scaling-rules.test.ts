// Stabilization windows and scaling policies of the HPA, on an injected clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScalingRules } from '../../src/controllers/hpa-scaling-rules.js';
import type { HorizontalPodAutoscalerBehavior } from '../../src/api/kinds/horizontalpodautoscaler.js';
import { FakeClock } from '../../src/util/clock.js';

function rules() {
  const clock = new FakeClock();
  return { clock, r: new ScalingRules(() => clock.now()) };
}

const args = (currentReplicas: number, desiredReplicas: number, behavior?: HorizontalPodAutoscalerBehavior, minReplicas = 1, maxReplicas = 20) => ({
  key: 'default/web',
  behavior,
  minReplicas,
  maxReplicas,
  currentReplicas,
  desiredReplicas,
});

test('without behavior: the highest recommendation of the last 5 minutes holds a scale-down', async () => {
  const { clock, r } = rules();
  r.recordInitialRecommendation('default/web', 5);
  let out = r.normalize(args(5, 2));
  assert.equal(out.replicas, 5);
  assert.deepEqual(out.conditions[0], { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' });
  await clock.advance(5 * 60_000 + 1);
  out = r.normalize(args(5, 2));
  // The 2 recorded a moment ago is the highest left; the first 5 has aged out.
  assert.equal(out.replicas, 2);
  assert.deepEqual(out.conditions[1], { type: 'ScalingLimited', status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' });
});

test('without behavior: up by at most max(2 × current, 4), and never past maxReplicas', async () => {
  const { r } = rules();
  let out = r.normalize(args(3, 10));
  assert.equal(out.replicas, 6);
  assert.deepEqual(out.conditions[1], { type: 'ScalingLimited', status: 'True', reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' });
  out = r.normalize(args(3, 10, undefined, 1, 5));
  assert.equal(out.replicas, 5);
  assert.equal(out.conditions[1]!.reason, 'TooManyReplicas');
});

test("behavior's default scale-up: the larger of +4 pods and +100 % per 15 s", async () => {
  const { clock, r } = rules();
  const behavior = {};
  let out = r.normalize(args(1, 10, behavior));
  assert.equal(out.replicas, 5);
  r.recordScaleEvent('default/web', behavior, 1, 5);
  await clock.advance(5_000);
  // Within the period the 4 pods added count against it: start 1, so still 5.
  out = r.normalize(args(5, 10, behavior));
  assert.equal(out.replicas, 5);
  assert.equal(out.conditions[1]!.reason, 'ScaleUpLimit');
  await clock.advance(11_000);
  out = r.normalize(args(5, 30, behavior));
  assert.equal(out.replicas, 10);
});

test('a Pods policy over 60 s, and selectPolicy Min picks the smaller change', async () => {
  const { clock, r } = rules();
  const slow: HorizontalPodAutoscalerBehavior = { scaleUp: { policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } };
  assert.equal(r.normalize(args(2, 5, slow)).replicas, 3);
  r.recordScaleEvent('default/web', slow, 2, 3);
  await clock.advance(10_000);
  assert.equal(r.normalize(args(3, 5, slow)).replicas, 3);
  await clock.advance(51_000);
  assert.equal(r.normalize(args(3, 5, slow)).replicas, 4);
  const min: HorizontalPodAutoscalerBehavior = { scaleUp: { selectPolicy: 'Min', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] } };
  assert.equal(rules().r.normalize(args(10, 30, min)).replicas, 14);
});

test('scale-down: the window with behavior, a Percent policy, Disabled, and the minReplicas floor', async () => {
  const { clock, r } = rules();
  const behavior: HorizontalPodAutoscalerBehavior = { scaleDown: { stabilizationWindowSeconds: 60, policies: [{ type: 'Percent', value: 50, periodSeconds: 15 }] } };
  r.recordInitialRecommendation('default/web', 10);
  let out = r.normalize(args(10, 1, behavior));
  assert.equal(out.replicas, 10);
  assert.equal(out.conditions[0]!.reason, 'ScaleDownStabilized');
  await clock.advance(61_000);
  out = r.normalize(args(10, 1, behavior));
  assert.equal(out.replicas, 5);
  assert.deepEqual(out.conditions[1], { type: 'ScalingLimited', status: 'True', reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' });
  const disabled: HorizontalPodAutoscalerBehavior = { scaleDown: { selectPolicy: 'Disabled', stabilizationWindowSeconds: 0 } };
  assert.equal(rules().r.normalize(args(4, 1, disabled)).replicas, 4);
  const floor = rules().r.normalize(args(4, 0, { scaleDown: { stabilizationWindowSeconds: 0 } }, 2));
  assert.equal(floor.replicas, 2);
  assert.equal(floor.conditions[1]!.reason, 'TooFewReplicas');
});
