// Suite `crd`: custom-object creates per second through the API at 128 clients beside ConfigMap
// creates per second on the same server in the same run (rounds alternate, so a slow spell of a
// shared machine falls on both), and the server's memory for 10,000 custom objects beside 10,000
// ConfigMaps of the same size. A custom object pays for schema pruning, defaulting and validation
// where a ConfigMap pays for its built-in checks; the goal is at least 80% of the ConfigMap rate.
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { createNamespace, startSkiffServer, type SkiffServer } from '../lib/servers.js';
import { expectOk, LeanConnection } from '../lib/http-load.js';
import { fmtInt, fmtMiB, fmtMs, progress, rssOf, sleep, type Table } from '../lib/util.js';
import { createLoad, type LoadResult } from './api.js';

const NAMESPACE = 'bench-crd';
const CLIENTS = 128;
const ROUNDS = 3;
const MEMORY_OBJECTS = 10_000;
const PAYLOAD_BYTES = 300;
const CM_PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
const CR_PATH = `/apis/bench.skiff.dev/v1/namespaces/${NAMESPACE}/widgets`;

/** A CRD with what real ones have: a structural schema with a pattern, an enum, bounds and a default. */
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.bench.skiff.dev' },
  spec: {
    group: 'bench.skiff.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'integer', minimum: 0, maximum: 1000 },
                  color: { type: 'string', enum: ['red', 'green', 'blue'], default: 'red' },
                  owner: { type: 'string', pattern: '^[a-z0-9-]+$' },
                  payload: { type: 'string', maxLength: 4096 },
                },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' } } },
            },
          },
        },
      },
    ],
  },
};

function configMap(name: string): unknown {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: { size: '3', owner: 'team-a', payload: 'x'.repeat(PAYLOAD_BYTES) } };
}

function widget(name: string): unknown {
  return { apiVersion: 'bench.skiff.dev/v1', kind: 'Widget', metadata: { name, labels: { app: 'bench' } }, spec: { size: 3, owner: 'team-a', payload: 'x'.repeat(PAYLOAD_BYTES) } };
}

/** Creates `count` objects with `clients` loops, as fast as they go. */
async function fill(server: SkiffServer, path: string, make: (name: string) => unknown, count: number): Promise<void> {
  const conns = await Promise.all(Array.from({ length: 32 }, () => LeanConnection.open(server.kubeconfig)));
  let next = 0;
  try {
    await Promise.all(
      conns.map(async (c) => {
        for (let i = next++; i < count; i = next++) expectOk(await c.request('POST', path, JSON.stringify(make(`m-${i}`))));
      }),
    );
  } finally {
    for (const c of conns) c.close();
  }
}

async function startWithCrd(): Promise<SkiffServer> {
  const server = await startSkiffServer();
  await createNamespace(server, NAMESPACE);
  const admin = server.client();
  try {
    await admin.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD);
    for (let i = 0; ; i++) {
      try {
        await admin.get(CR_PATH);
        break;
      } catch (e) {
        if (i > 100) throw e;
        await sleep(100);
      }
    }
  } finally {
    admin.close();
  }
  return server;
}

/** Resident memory a server grows by while `count` objects are created in it: a fresh server each. */
async function memoryFor(path: string, make: (name: string) => unknown, count: number): Promise<{ before: number; after: number }> {
  const server = await startWithCrd();
  try {
    const before = rssOf(server.pid) ?? 0;
    await fill(server, path, make, count);
    // Let the last writes' garbage go before reading.
    await sleep(2000);
    return { before, after: rssOf(server.pid) ?? 0 };
  } finally {
    await server.stop();
  }
}

export const crdSuite: Suite = {
  name: 'crd',
  description: 'custom-object creates/s at 128 clients beside ConfigMap creates/s, and server memory for 10,000 custom objects',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const rounds: { cm: LoadResult; cr: LoadResult }[] = [];
    const server = await startWithCrd();
    try {
      await createLoad(server, CM_PATH, configMap, 16, Math.min(1000, ctx.durationMs), 'wcm');
      await createLoad(server, CR_PATH, widget, 16, Math.min(1000, ctx.durationMs), 'wcr');
      for (let i = 0; i < ROUNDS; i++) {
        progress(`crd: round ${i + 1}/${ROUNDS}: ConfigMap then custom-object creates, ${CLIENTS} clients, ${ctx.durationMs} ms each`);
        const cm = await createLoad(server, CM_PATH, configMap, CLIENTS, ctx.durationMs, `cm${i}`);
        const cr = await createLoad(server, CR_PATH, widget, CLIENTS, ctx.durationMs, `cr${i}`);
        rounds.push({ cm, cr });
        progress(`crd: round ${i + 1}: ConfigMaps ${cm.opsPerSec}/s, custom objects ${cr.opsPerSec}/s (${((cr.opsPerSec / cm.opsPerSec) * 100).toFixed(0)}%)`);
      }
    } finally {
      await server.stop();
    }
    const count = ctx.quick ? MEMORY_OBJECTS / 10 : MEMORY_OBJECTS;
    progress(`crd: server memory for ${count} ConfigMaps`);
    const cmMem = await memoryFor(CM_PATH, configMap, count);
    progress(`crd: server memory for ${count} custom objects`);
    const crMem = await memoryFor(CR_PATH, widget, count);

    const sum = (f: (r: { cm: LoadResult; cr: LoadResult }) => number) => rounds.reduce((a, r) => a + f(r), 0);
    const cmRate = sum((r) => r.cm.opsPerSec) / rounds.length;
    const crRate = sum((r) => r.cr.opsPerSec) / rounds.length;
    const pct = crRate / cmRate;
    const rates: Table = {
      title: `crd: creates/s through the API at ${CLIENTS} clients, custom objects beside ConfigMaps (same server, alternating rounds)`,
      headers: ['round', 'ConfigMap creates/s', 'p99', 'custom-object creates/s', 'p99', 'custom / ConfigMap'],
      rows: [
        ...rounds.map((r, i) => [String(i + 1), fmtInt(r.cm.opsPerSec), fmtMs(r.cm.p99Ms), fmtInt(r.cr.opsPerSec), fmtMs(r.cr.p99Ms), `${(r.cr.opsPerSec / r.cm.opsPerSec * 100).toFixed(0)}%`]),
        ['mean', fmtInt(cmRate), '', fmtInt(crRate), '', `${(pct * 100).toFixed(0)}%`],
      ],
      notes: [`goal: custom objects at ≥ 80% of the ConfigMap rate: ${pct >= 0.8 ? 'met' : 'missed'}`],
    };
    const perObject = (m: { before: number; after: number }) => Math.max(0, m.after - m.before) / count;
    const memory: Table = {
      title: `crd: server resident memory for ${count} objects (fresh server each, ~${PAYLOAD_BYTES} B payload)`,
      headers: ['objects', 'RSS before', 'RSS after', 'per object'],
      rows: [
        [`${count} ConfigMaps`, fmtMiB(cmMem.before), fmtMiB(cmMem.after), `${fmtInt(perObject(cmMem))} B`],
        [`${count} custom objects`, fmtMiB(crMem.before), fmtMiB(crMem.after), `${fmtInt(perObject(crMem))} B`],
      ],
      notes: [],
    };
    return { tables: [rates, memory], data: { rounds, cmRate, crRate, ratio: pct, memory: { configMaps: cmMem, customObjects: crMem, count } } };
  },
};
