// Suite `webhooks`: ConfigMap creates through one validating and one mutating admission webhook
// beside the same creates without them, on the same server in the same run (rounds alternate, so
// a slow spell of a shared machine falls on both). The webhooks are the test suite's HTTPS webhook
// server in this process, behind a Service and its Endpoints, picked by a namespaceSelector: the
// figures are the latency and server CPU a create pays for two webhook calls over TLS.
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { createNamespace, startSkiffServer, type SkiffServer } from '../lib/servers.js';
import { fmtInt, fmtMs, progress, type Table } from '../lib/util.js';
import { createLoad, type LoadResult } from './api.js';
import { TestWebhookServer, admissionAnswer } from '../../test/support/webhook-server.js';

const CLIENTS = 16;
const ROUNDS = 3;
const PLAIN = 'bench-plain';
const HOOKED = 'bench-hooked';
const HOOKS_NS = 'bench-webhooks';

const configMaps = (namespace: string): string => `/api/v1/namespaces/${namespace}/configmaps`;

function configMap(name: string): unknown {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(300) } };
}

function webhookConfiguration(kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration', path: string, caBundle: string): unknown {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name: `bench-${path.slice(1)}` },
    webhooks: [
      {
        name: `${path.slice(1)}.bench.skiff.dev`,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        clientConfig: { service: { namespace: HOOKS_NS, name: 'hooks', path }, caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        namespaceSelector: { matchLabels: { webhooks: 'on' } },
      },
    ],
  };
}

async function setUp(server: SkiffServer, hooks: TestWebhookServer): Promise<void> {
  await createNamespace(server, PLAIN);
  await createNamespace(server, HOOKS_NS);
  const admin = server.client();
  try {
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HOOKED, labels: { webhooks: 'on' } } });
    await admin.create(`/api/v1/namespaces/${HOOKS_NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: hooks.port }] } });
    await admin.create(`/api/v1/namespaces/${HOOKS_NS}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hooks' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: hooks.port }] }] });
    await admin.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', webhookConfiguration('ValidatingWebhookConfiguration', '/validate', hooks.caBundle));
    await admin.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', webhookConfiguration('MutatingWebhookConfiguration', '/mutate', hooks.caBundle));
  } finally {
    admin.close();
  }
}

/** Server CPU per create, in ms of one core. */
const cpuMsPerCreate = (r: LoadResult): number => ((r.serverCpuPct ?? 0) * 10) / Math.max(1, r.opsPerSec);

export const webhooksSuite: Suite = {
  name: 'webhooks',
  description: `ConfigMap creates/s at ${CLIENTS} clients through one validating and one mutating webhook beside the same creates without them`,
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const hooks = new TestWebhookServer();
    await hooks.start([`hooks.${HOOKS_NS}.svc`]);
    hooks.handlers.set('/validate', (r) => admissionAnswer(r, { allowed: true }));
    hooks.handlers.set('/mutate', (r) => admissionAnswer(r, { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }] }));
    const server = await startSkiffServer();
    const rounds: { plain: LoadResult; hooked: LoadResult }[] = [];
    try {
      await setUp(server, hooks);
      await createLoad(server, configMaps(PLAIN), configMap, CLIENTS, Math.min(1000, ctx.durationMs), 'wp');
      await createLoad(server, configMaps(HOOKED), configMap, CLIENTS, Math.min(1000, ctx.durationMs), 'wh');
      for (let i = 0; i < ROUNDS; i++) {
        progress(`webhooks: round ${i + 1}/${ROUNDS}: creates without webhooks, then through two, ${CLIENTS} clients, ${ctx.durationMs} ms each`);
        const plain = await createLoad(server, configMaps(PLAIN), configMap, CLIENTS, ctx.durationMs, `p${i}`);
        const hooked = await createLoad(server, configMaps(HOOKED), configMap, CLIENTS, ctx.durationMs, `h${i}`);
        rounds.push({ plain, hooked });
        progress(`webhooks: round ${i + 1}: without ${plain.opsPerSec}/s p50 ${fmtMs(plain.p50Ms)}, with ${hooked.opsPerSec}/s p50 ${fmtMs(hooked.p50Ms)}`);
      }
    } finally {
      await server.stop();
      hooks.stop().catch(() => {});
    }
    // The webhook server sits in this process: hooks.calls grows with every create; drop it now.
    hooks.calls.length = 0;
    const mean = (f: (r: { plain: LoadResult; hooked: LoadResult }) => number): number => rounds.reduce((a, r) => a + f(r), 0) / rounds.length;
    const m = {
      plainRate: mean((r) => r.plain.opsPerSec),
      hookedRate: mean((r) => r.hooked.opsPerSec),
      plainP50: mean((r) => r.plain.p50Ms),
      hookedP50: mean((r) => r.hooked.p50Ms),
      plainP99: mean((r) => r.plain.p99Ms),
      hookedP99: mean((r) => r.hooked.p99Ms),
      plainCpu: mean((r) => cpuMsPerCreate(r.plain)),
      hookedCpu: mean((r) => cpuMsPerCreate(r.hooked)),
    };
    const table: Table = {
      title: `webhooks: ConfigMap creates at ${CLIENTS} clients, through one validating and one mutating webhook beside none (same server, alternating rounds)`,
      headers: ['round', 'without: creates/s', 'p50', 'p99', 'server CPU/create', 'with webhooks: creates/s', 'p50', 'p99', 'server CPU/create'],
      rows: [
        ...rounds.map((r, i) => [String(i + 1), fmtInt(r.plain.opsPerSec), fmtMs(r.plain.p50Ms), fmtMs(r.plain.p99Ms), `${cpuMsPerCreate(r.plain).toFixed(2)} ms`, fmtInt(r.hooked.opsPerSec), fmtMs(r.hooked.p50Ms), fmtMs(r.hooked.p99Ms), `${cpuMsPerCreate(r.hooked).toFixed(2)} ms`]),
        ['mean', fmtInt(m.plainRate), fmtMs(m.plainP50), fmtMs(m.plainP99), `${m.plainCpu.toFixed(2)} ms`, fmtInt(m.hookedRate), fmtMs(m.hookedP50), fmtMs(m.hookedP99), `${m.hookedCpu.toFixed(2)} ms`],
      ],
      notes: [`added per create: ${fmtMs(m.hookedP50 - m.plainP50)} at the median, ${(m.hookedCpu - m.plainCpu).toFixed(2)} ms of server CPU (the webhook server runs in the benchmark's process, not the server's)`],
    };
    return { tables: [table], data: { rounds, ...m } };
  },
};
