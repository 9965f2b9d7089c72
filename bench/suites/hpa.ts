// Suite `hpa`: how fast a HorizontalPodAutoscaler reacts to a load step. A Deployment of one
// process-runtime pod (200m CPU requested, idle) under an HPA targeting 50 % CPU; at the step the
// pod starts burning a core. Timed from the step to (a) the first metrics.k8s.io PodMetrics that
// shows usage the HPA acts on (above target by more than the tolerance), the floor any autoscaler reading that API has (the peer: what `kubectl top`
// sees), and (b) the Deployment's spec.replicas raised by the HPA. Run twice: with upstream's
// defaults (15 s metric resolution, as metrics-server's; 15 s HPA sync period) and with both at 2 s.
// Needs a server that serves the resource metrics API (`--metric-resolution`).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { eventually } from '../../test/support/eventually.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { milliValue } from '../../src/api/quantity.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { fmtMs, makeTempDir, percentile, progress, removeTempDir, skiffEntry, startChild, type ManagedChild, type Table } from '../lib/util.js';

const TOKEN = 'bench0.hpa0000000000000';
const NODE = 'bench-hpa';
/** Above the 50 % target of a 200m request by more than the 0.1 tolerance: the usage that makes the HPA act. */
const LOAD_SEEN_MILLICORES = 110;

interface Setting {
  label: string;
  resolution: string;
  sync: string;
}

interface StepTimes {
  metricsMs: number;
  scaledMs: number;
}

function deployment(name: string, go: string, stop: string): unknown {
  const script = `while [ ! -e ${go} ]; do sleep 0.1; done; while [ ! -e ${stop} ]; do :; done; exec sleep 3600`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { nodeName: NODE, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script], resources: { requests: { cpu: '200m' } } }] } },
    },
  };
}

function hpa(name: string): unknown {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      minReplicas: 1,
      maxReplicas: 2,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    },
  };
}

/** The summed CPU of a Deployment's pods as metrics.k8s.io reports it, in millicores. */
async function podCpu(client: ApiClient, app: string): Promise<number> {
  const list = await client.get<{ items: { containers: { usage: { cpu: string } }[] }[] }>(`/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3D${app}`);
  return list.items.reduce((sum, p) => sum + p.containers.reduce((s, c) => s + milliValue(c.usage.cpu), 0), 0);
}

async function measure(setting: Setting, steps: number, work: string): Promise<StepTimes[]> {
  let server: SkiffServer | undefined;
  let agent: ManagedChild | undefined;
  const stops: string[] = [];
  try {
    server = await startSkiffServer({ serverArgs: ['--token', TOKEN, '--metric-resolution', setting.resolution, '--horizontal-pod-autoscaler-sync-period', setting.sync] });
    const client = server.client(30_000);
    const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
    const agentDir = join(work, `agent-${setting.resolution}`);
    agent = startChild(
      'skiff agent',
      process.execPath,
      [skiffEntry(), 'agent', '--server', serverUrl, '--token', TOKEN, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--data-dir', agentDir, '--node-name', NODE, '--kubelet-port', '0', '--runtime', 'process'],
      join(work, `agent-${setting.resolution}.log`),
    );
    await eventually(async () => (await client.get<Node>(`/api/v1/nodes/${NODE}`)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 60_000, 'agent Ready', 100);
    const out: StepTimes[] = [];
    for (let i = 0; i < steps; i++) {
      const name = `step-${i}`;
      const go = join(work, `${setting.resolution}-${name}-go`);
      const stop = join(work, `${setting.resolution}-${name}-stop`);
      stops.push(stop);
      await client.create('/apis/apps/v1/namespaces/default/deployments', deployment(name, go, stop));
      await client.create('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', hpa(name));
      // Idle first: the HPA has read a figure and keeps one pod.
      await eventually(
        async () => {
          const h = await client.get<{ status?: { conditions?: { type: string; reason?: string }[] } }>(`/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/${name}`);
          return h.status?.conditions?.some((c) => c.type === 'ScalingActive' && c.reason === 'ValidMetricFound');
        },
        180_000,
        `${name}: HPA active`,
        200,
      );
      progress(`hpa (${setting.label}): step ${i + 1}/${steps}`);
      const t0 = performance.now();
      writeFileSync(go, '');
      let metricsMs: number | undefined;
      let scaledMs: number | undefined;
      await eventually(
        async () => {
          if (metricsMs === undefined && (await podCpu(client, name)) > LOAD_SEEN_MILLICORES) metricsMs = performance.now() - t0;
          if (scaledMs === undefined) {
            const d = await client.get<{ spec: { replicas: number } }>(`/apis/apps/v1/namespaces/default/deployments/${name}`);
            if (d.spec.replicas > 1) scaledMs = performance.now() - t0;
          }
          return metricsMs !== undefined && scaledMs !== undefined;
        },
        180_000,
        `${name}: load seen and scaled`,
        100,
      );
      out.push({ metricsMs: metricsMs!, scaledMs: scaledMs! });
      // End the load and the step's objects before the next.
      writeFileSync(stop, '');
      await client.delete(`/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/${name}`);
      await client.delete(`/apis/apps/v1/namespaces/default/deployments/${name}`);
    }
    client.close();
    return out;
  } finally {
    for (const s of stops) writeFileSync(s, '');
    await agent?.stop(15_000);
    await server?.stop();
  }
}

export const hpaSuite: Suite = {
  name: 'hpa',
  description: 'HorizontalPodAutoscaler reaction to a CPU load step, beside the metrics API showing the load',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const help = execFileSync(process.execPath, [skiffEntry(), 'server', '--help']).toString();
    if (!help.includes('--metric-resolution')) {
      progress('hpa: skipped, this build serves no resource metrics API');
      return { tables: [{ title: 'hpa: skipped', headers: ['needs'], rows: [['the resource metrics API (metrics.k8s.io)']] }], data: { skipped: true } };
    }
    const steps = ctx.quick ? 1 : 3;
    const settings: Setting[] = ctx.quick
      ? [{ label: '2 s resolution, 2 s sync', resolution: '2s', sync: '2s' }]
      : [
          { label: "upstream's defaults: 15 s resolution, 15 s sync", resolution: '15s', sync: '15s' },
          { label: '2 s resolution, 2 s sync', resolution: '2s', sync: '2s' },
        ];
    const work = makeTempDir('skiff-bench-hpa-');
    const rows: string[][] = [];
    const data: Record<string, unknown> = {};
    try {
      for (const setting of settings) {
        const times = await measure(setting, steps, work);
        const metrics = times.map((t) => t.metricsMs).sort((a, b) => a - b);
        const scaled = times.map((t) => t.scaledMs).sort((a, b) => a - b);
        rows.push([setting.label, fmtMs(percentile(metrics, 50)), fmtMs(percentile(scaled, 50)), fmtMs(scaled[scaled.length - 1])]);
        data[setting.resolution] = { steps, metricsMs: metrics, scaledMs: scaled };
      }
    } finally {
      removeTempDir(work);
    }
    const table: Table = {
      title: `hpa: load step → metrics.k8s.io shows it (peer) and → Deployment scaled by the HPA (${steps} step${steps > 1 ? 's' : ''} each)`,
      headers: ['setting', 'metrics p50', 'HPA p50', 'HPA max'],
      rows,
      notes: ['upper bound upstream documents for its defaults: one metric resolution plus one sync period (about 30 s)'],
    };
    return { tables: [table], data };
  },
};
