// An HPA scaling a Deployment on real CPU load: process-runtime pods that burn a core when told to
// (the runtime shares the host's files, so the test starts and stops the load with a file), the
// agent's measured usage through metrics.k8s.io, and the HPA controller with upstream's algorithm.
// The Deployment grows when the load starts and shrinks back after the scale-down stabilization
// window (15 s here, set through spec.behavior) once it stops. Needs a server that serves the
// resource metrics API (`--metric-resolution`); skipped on one that does not.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { SKIFF_BIN, TEST_JOIN_TOKEN, TestAgent, TestServer, eventually } from '../support/cluster.js';

const NODE = 'hpa-load-node';
const servesMetrics = execFileSync(process.execPath, [SKIFF_BIN, 'server', '--help']).toString().includes('--metric-resolution');

describe('HorizontalPodAutoscaler on CPU load (process runtime, metrics.k8s.io)', { skip: servesMetrics ? false : 'this build serves no resource metrics API' }, () => {
  const s = new TestServer('hpa-load');
  const a = new TestAgent(s, NODE);
  const scratch = mkdtempSync(join(tmpdir(), 'hpa-load-'));
  const go = join(scratch, 'go');
  const stop = join(scratch, 'stop');

  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN, '--metric-resolution', '2s', '--horizontal-pod-autoscaler-sync-period', '2s']);
    await a.start();
  });

  after(async () => {
    writeFileSync(stop, '');
    await a.stop();
    await s.stop();
    s.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  const replicas = async () => Number(await s.k(['get', 'deployment', 'burn', '-o', 'jsonpath={.spec.replicas}']));
  const rescales = async () => s.k(['get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,reason=SuccessfulRescale', '-o', 'jsonpath={range .items[*]}{.message}{"\\n"}{end}']);

  it('scales up when the load starts and back down after the stabilization window once it stops', async () => {
    // Idle until the go file appears, then a busy loop until the stop file does.
    const script = `while [ ! -e ${go} ]; do sleep 0.2; done; while [ ! -e ${stop} ]; do :; done; exec sleep 3600`;
    await s.k(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'burn' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'burn' } },
          template: {
            metadata: { labels: { app: 'burn' } },
            spec: { nodeName: NODE, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script], resources: { requests: { cpu: '200m' } } }] },
          },
        },
      }),
    });
    await s.k(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'burn' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'burn' },
          minReplicas: 1,
          maxReplicas: 2,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
          behavior: { scaleDown: { stabilizationWindowSeconds: 15 } },
        },
      }),
    });
    // Idle: the HPA reads a figure and keeps one pod.
    await eventually(async () => (await s.k(['get', 'hpa', 'burn', '-o', 'jsonpath={.status.conditions[?(@.type=="ScalingActive")].reason}'])) === 'ValidMetricFound', 60_000, 'ScalingActive ValidMetricFound');
    assert.equal(await replicas(), 1);

    const stepAt = Date.now();
    writeFileSync(go, '');
    await eventually(async () => (await replicas()) === 2, 60_000, 'scaled up to 2');
    const reactionMs = Date.now() - stepAt;
    assert.match(await rescales(), /^New size: 2; reason: cpu resource utilization \(percentage of request\) above target$/m);
    const row = (await s.k(['get', 'hpa', 'burn', '--no-headers'])).trim();
    assert.match(row, /^burn\s+Deployment\/burn\s+cpu: \d+%\/50%\s+1\s+2\s+[12]\s+\S+$/);
    console.log(`HPA reaction to a CPU load step (metric resolution 2 s, sync period 2 s): ${(reactionMs / 1000).toFixed(1)} s`);

    writeFileSync(stop, '');
    const stoppedAt = Date.now();
    await eventually(async () => (await replicas()) === 1, 120_000, 'scaled back down to 1');
    assert.ok(Date.now() - stoppedAt >= 15_000, 'not before the 15 s stabilization window');
    assert.match(await rescales(), /^New size: 1; reason: All metrics below target$/m);
  });
});
