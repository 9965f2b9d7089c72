// "Apply a folder of manifests and report": every bundle (top-level subfolder) of a directory is
// applied with real kubectl, read back, and compared with what was sent. The objects a bundle's
// authors wrote are the test data; the check knows nothing of any particular bundle.
import { copyFileSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import YAML from 'yaml';
import { ApiClient } from '../../src/client/rest.js';
import { groupVersionPath } from '../../src/api/paths.js';
import { parseApiVersion } from '../../src/api/types.js';
import { runKubectl, type KubectlResult } from './cluster.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string } & JsonObject;
  [key: string]: JsonValue;
}

export interface Bundle {
  name: string;
  /** In the order a bundle's authors meant them to be applied (file name order, then document order). */
  objects: ManifestObject[];
  /**
   * Where each object goes when it names no namespace (same index as objects): each folder holding
   * manifests is its own application, as `kubectl apply -f folder` from a context of its own; two
   * examples side by side in one bundle may use the same names.
   */
  namespaces: string[];
}

export type ApplyMode = 'server-side' | 'client-side';

export interface Refusal {
  apiVersion: string;
  kind: string;
  name: string;
  error: string;
  /** Why this refusal is expected today; absent: a refusal the check fails on. */
  expected?: string;
}

export interface Mismatch {
  kind: string;
  name: string;
  /** Where the object read back differs from what was sent, e.g. `spec.template.spec.containers[0].image`. */
  paths: string[];
}

export interface ModeReport {
  mode: ApplyMode;
  accepted: number;
  refusals: Refusal[];
  /** Objects accepted but read back changed. */
  mismatches: Mismatch[];
}

export interface BundleReport {
  bundle: string;
  objects: number;
  modes: ModeReport[];
}

/**
 * Kinds skiff does not serve yet, as data: the list shrinks as kinds arrive, and a refusal of any
 * kind not listed here fails the check.
 */
export const NOT_SERVED_YET: readonly { group: string; kind: string; why: string }[] = [
];

/**
 * A bundle's admission webhook (ingress-nginx's) that calls its own pods: with no pods running, a
 * later object it matches is refused by its failurePolicy Fail, as on any cluster without them.
 */
const WEBHOOK_WITHOUT_PODS = /failed calling webhook "[^"]+": failed to call webhook: Post "[^"]+": no endpoints available for service/;

/**
 * kubectl's client-side apply keeps the whole object in the last-applied-configuration annotation,
 * and annotations may hold at most 256 KiB together: larger objects (big CRDs) are refused for
 * client-side apply on every cluster, which is why their authors say to apply them server-side.
 */
export const LAST_APPLIED_LIMIT_BYTES = 262_144;

const groupOf = (apiVersion: string): string => parseApiVersion(apiVersion).group;

function expectedRefusal(o: ManifestObject, mode: ApplyMode, error: string, crdRefused: Map<string, string>): string | undefined {
  const listed = NOT_SERVED_YET.find((k) => k.kind === o.kind && k.group === groupOf(o.apiVersion));
  if (listed) return listed.why;
  if (WEBHOOK_WITHOUT_PODS.test(error)) return 'refused by a webhook of an earlier bundle whose pods do not run here';
  const definedBy = crdRefused.get(`${groupOf(o.apiVersion)}/${o.kind}`);
  if (definedBy) return `its CustomResourceDefinition was refused (${definedBy})`;
  if (mode === 'client-side' && /Too long: (must have at most|may not be more than) 262144 bytes/.test(error) && JSON.stringify(o).length > LAST_APPLIED_LIMIT_BYTES) {
    return 'too large for the last-applied annotation';
  }
  return undefined;
}

function manifestFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...manifestFiles(p));
    else if (/\.(ya?ml|json)$/.test(name)) out.push(p);
  }
  return out;
}

function isManifestObject(v: unknown): v is ManifestObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const md = o.metadata as Record<string, unknown> | undefined;
  return typeof o.apiVersion === 'string' && typeof o.kind === 'string' && typeof md?.name === 'string';
}

/** The objects of one manifest file. */
export function parseManifests(text: string, source = 'manifest'): ManifestObject[] {
  const out: ManifestObject[] = [];
  // YAML 1.1, as kubectl's parser reads it (`on`, `yes` are booleans there).
  for (const doc of YAML.parseAllDocuments(text, { version: '1.1' })) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0]!.message}`);
    const v: unknown = doc.toJS({ maxAliasCount: -1 });
    if (v === null || v === undefined) continue;
    // kubectl opens any `*List` with items (ConfigMapList, List) into its objects.
    const list = v as { kind?: unknown; items?: unknown };
    const items = typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items) ? list.items : [v];
    for (const item of items) {
      if (!isManifestObject(item)) throw new Error(`${source}: a document without apiVersion, kind and metadata.name`);
      out.push(item);
    }
  }
  return out;
}

function namespaceName(parts: string[]): string {
  return ['corpus', ...parts].join('-').toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 63).replace(/-+$/, '');
}

/** Every top-level subfolder of dir is a bundle; files directly in dir (a sources list) are not. */
export function readBundles(dir: string): Bundle[] {
  return readdirSync(dir)
    .sort()
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .map((name) => {
      const bundle: Bundle = { name, objects: [], namespaces: [] };
      for (const f of manifestFiles(join(dir, name))) {
        const ns = namespaceName([name, ...dirname(relative(join(dir, name), f)).split(sep).filter((p) => p !== '.')]);
        for (const o of parseManifests(readFileSync(f, 'utf8'), relative(dir, f))) {
          bundle.objects.push(o);
          bundle.namespaces.push(ns);
        }
      }
      return bundle;
    });
}

/**
 * Where a path differs: every field sent must be read back with the same value; fields the server
 * adds are fine. A null sent is the field left out, and an empty map or list sent may come back
 * absent (upstream's types omit empty ones), as on any cluster.
 */
export function changedPaths(sent: JsonValue | undefined, got: JsonValue | undefined, path = ''): string[] {
  if (sent === null || sent === undefined) return [];
  if (Array.isArray(sent)) {
    if (got === undefined && sent.length === 0) return [];
    if (!Array.isArray(got) || got.length !== sent.length) return [path || '.'];
    return sent.flatMap((s, i) => changedPaths(s, got[i], `${path}[${i}]`));
  }
  if (typeof sent === 'object') {
    if (got === undefined && Object.keys(sent).length === 0) return [];
    if (typeof got !== 'object' || got === null || Array.isArray(got)) return [path || '.'];
    return Object.entries(sent).flatMap(([k, v]) => changedPaths(v, got[k], path ? `${path}.${k}` : k));
  }
  return sent === got ? [] : [path];
}

/** A Secret's stringData is written into data (base64) by every apiserver; compare it there. */
function asStored(o: ManifestObject): ManifestObject {
  if (o.kind !== 'Secret' || o.apiVersion !== 'v1' || typeof o.stringData !== 'object' || o.stringData === null || Array.isArray(o.stringData)) return o;
  const { stringData, ...rest } = o;
  const data: JsonObject = { ...((rest.data as JsonObject | undefined) ?? {}) };
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v)).toString('base64');
  return { ...rest, data } as ManifestObject;
}

export interface KubectlTarget {
  kubeconfig: string;
  cacheDir: string;
  /** kubectl.1.NN beside kubectl; absent: the kubectl on PATH. */
  version?: string;
}

// A big bundle's apply is one kubectl call, and its output lists every object.
const KUBECTL_TIMEOUT_MS = 120_000;
const KUBECTL_MAX_BUFFER = 256 * 1024 * 1024;

async function kubectl(t: KubectlTarget, args: string[], input?: string): Promise<KubectlResult> {
  const t0 = Date.now();
  const r = await runKubectl(t, args, { version: t.version, input, timeoutMs: KUBECTL_TIMEOUT_MS, maxBuffer: KUBECTL_MAX_BUFFER });
  if (process.env.SKIFF_MANIFESTS_TRACE) console.error(`kubectl ${args.slice(0, 3).join(' ')}: ${Date.now() - t0} ms, code ${r.code}\n${r.stdout.slice(0, 3000)}\n${r.stderr.slice(0, 3000)}`);
  return r;
}

/** A JSON stream: kubectl reads a stream that starts with JSON as JSON throughout, without `---`. */
function stream(objects: ManifestObject[]): string {
  return objects.map((o) => JSON.stringify(o)).join('\n');
}

const isNamespaceOrCrd = (o: ManifestObject): boolean =>
  (o.kind === 'Namespace' && o.apiVersion === 'v1') || (o.kind === 'CustomResourceDefinition' && groupOf(o.apiVersion) === 'apiextensions.k8s.io');

function identity(o: ManifestObject, namespace: string): string {
  return `${groupOf(o.apiVersion)}/${o.kind}/${namespace}/${o.metadata.name}`;
}

/** A cluster-scoped object read back has no namespace, whatever the manifest said. */
function lookup(got: Map<string, ManifestObject>, o: ManifestObject, defaultNamespace: string): ManifestObject | undefined {
  return got.get(identity(o, o.metadata.namespace ?? defaultNamespace)) ?? got.get(identity(o, ''));
}

/**
 * A kubeconfig whose context defaults to namespace: `kubectl -n` would refuse the objects that name
 * another namespace, while a context's namespace is only a default, as in a user's own shell.
 */
async function inNamespace(t: KubectlTarget, namespace: string): Promise<KubectlTarget> {
  const kubeconfig = `${t.kubeconfig}.${namespace}`;
  copyFileSync(t.kubeconfig, kubeconfig);
  const scoped = { ...t, kubeconfig };
  const r = await kubectl(scoped, ['config', 'set-context', '--current', `--namespace=${namespace}`]);
  if (r.code !== 0) throw new Error(`kubectl config set-context: ${r.stderr}`);
  return scoped;
}

function firstLines(s: string, n = 3): string {
  return s.trim().split('\n').slice(0, n).join(' ').slice(0, 400);
}

/**
 * Applies a bundle in one mode: Namespaces and CRDs first (then waits for the CRDs to be
 * Established), the rest after, each phase in one kubectl call per folder as a user would; every
 * object is then read back. An object that is missing is applied once more on its own to learn its
 * error. The folders' namespaces are created first, as are namespaces a bundle uses without
 * defining them.
 */
export async function applyBundle(target: KubectlTarget, bundle: Bundle, mode: ApplyMode): Promise<ModeReport> {
  const applyArgs = ['apply', ...(mode === 'server-side' ? ['--server-side'] : []), '-f', '-'];
  const folders = new Map<string, { t: KubectlTarget; objects: ManifestObject[] }>();
  for (const [i, o] of bundle.objects.entries()) {
    const ns = bundle.namespaces[i]!;
    if (!folders.has(ns)) folders.set(ns, { t: await inNamespace(target, ns), objects: [] });
    folders.get(ns)!.objects.push(o);
  }
  const defined = new Set(bundle.objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));
  const used = new Set([...folders.keys(), ...bundle.objects.flatMap((o) => (o.metadata.namespace ? [o.metadata.namespace] : []))]);
  for (const ns of used) {
    if (defined.has(ns)) continue;
    const r = await kubectl(target, ['create', 'namespace', ns]);
    if (r.code !== 0 && !/AlreadyExists/.test(r.stderr)) throw new Error(`creating namespace ${ns}: ${r.stderr}`);
  }

  for (const { t, objects } of folders.values()) {
    const first = objects.filter(isNamespaceOrCrd);
    if (first.length > 0) await kubectl(t, applyArgs, stream(first));
  }
  const crds = bundle.objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `customresourcedefinition.apiextensions.k8s.io/${o.metadata.name}`);
  if (crds.length > 0) {
    // Those refused are reported below; waiting is only for those that went in.
    const present = await kubectl(target, ['get', '--ignore-not-found', '-o', 'name', ...crds]);
    const names = present.stdout.split('\n').filter(Boolean);
    if (names.length > 0) {
      const w = await kubectl(target, ['wait', '--for=condition=Established', '--timeout=30s', ...names]);
      if (w.code !== 0) throw new Error(`CRDs of ${bundle.name} not Established: ${w.stderr}`);
    }
  }
  for (const { t, objects } of folders.values()) {
    const rest = objects.filter((o) => !isNamespaceOrCrd(o));
    if (rest.length > 0) await kubectl(t, applyArgs, stream(rest));
  }

  const { got, served } = await readBack(target, bundle);
  const report: ModeReport = { mode, accepted: 0, refusals: [], mismatches: [] };
  // A custom resource whose CRD was refused for an expected reason is refused for that reason too.
  const crdRefused = new Map<string, string>();
  const order = [...bundle.objects.keys()].sort((a, b) => Number(!isNamespaceOrCrd(bundle.objects[a]!)) - Number(!isNamespaceOrCrd(bundle.objects[b]!)));
  for (const i of order) {
    const o = bundle.objects[i]!;
    const ns = bundle.namespaces[i]!;
    const back = lookup(got, o, ns);
    if (back) {
      report.accepted++;
      const paths = changedPaths(asStored(o) as JsonValue, back as JsonValue);
      if (paths.length > 0) report.mismatches.push({ kind: o.kind, name: o.metadata.name, paths });
      continue;
    }
    let error = `no matches for kind "${o.kind}" in version "${o.apiVersion}"`;
    if (served.has(`${o.apiVersion}/${o.kind}`)) {
      const again = await kubectl(folders.get(ns)!.t, applyArgs, stream([o]));
      error = again.code === 0 ? 'accepted on its own but not in the batch' : firstLines(again.stderr);
    }
    const expected = expectedRefusal(o, mode, error, crdRefused);
    const names = (o.spec as { group?: unknown; names?: { kind?: unknown } } | undefined) ?? {};
    if (expected && o.kind === 'CustomResourceDefinition' && typeof names.group === 'string' && typeof names.names?.kind === 'string') {
      crdRefused.set(`${names.group}/${names.names.kind}`, expected);
    }
    report.refusals.push({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, error, ...(expected ? { expected } : {}) });
  }
  return report;
}

interface Mapping {
  resource: string;
  namespaced: boolean;
}

/** What discovery serves for each apiVersion and kind; absent: not served. */
async function discover(client: ApiClient, objects: ManifestObject[]): Promise<Map<string, Mapping>> {
  const out = new Map<string, Mapping>();
  for (const apiVersion of new Set(objects.map((o) => o.apiVersion))) {
    const path = groupVersionPath(parseApiVersion(apiVersion));
    const list = await client.get<{ resources: { name: string; kind: string; namespaced: boolean }[] }>(path).catch(() => ({ resources: [] }));
    for (const r of list.resources) if (!r.name.includes('/')) out.set(`${apiVersion}/${r.kind}`, { resource: r.name, namespaced: r.namespaced });
  }
  return out;
}

/** Reads each object back by name, in the version it was sent in, keyed as `lookup` finds it. */
async function readBack(t: KubectlTarget, bundle: Bundle): Promise<{ got: Map<string, ManifestObject>; served: Map<string, Mapping> }> {
  const client = ApiClient.fromKubeconfig(t.kubeconfig, { timeoutMs: 30_000 });
  try {
    const served = await discover(client, bundle.objects);
    const got = new Map<string, ManifestObject>();
    for (const [i, o] of bundle.objects.entries()) {
      const namespace = bundle.namespaces[i]!;
      const m = served.get(`${o.apiVersion}/${o.kind}`);
      if (!m) continue;
      const prefix = groupVersionPath(parseApiVersion(o.apiVersion));
      const ns = m.namespaced ? `/namespaces/${encodeURIComponent(o.metadata.namespace ?? namespace)}` : '';
      const back = await client.get<ManifestObject>(`${prefix}${ns}/${m.resource}/${encodeURIComponent(o.metadata.name)}`).catch(() => undefined);
      if (back) got.set(identity(o, back.metadata.namespace ?? ''), back);
    }
    return { got, served };
  } finally {
    client.close();
  }
}

/** The bundles of a folder, each applied in every mode given (a fresh cluster for each mode). */
export async function applyFolder(targets: Partial<Record<ApplyMode, KubectlTarget>>, bundles: Bundle[]): Promise<BundleReport[]> {
  const reports: BundleReport[] = [];
  for (const b of bundles) {
    const modes = await Promise.all((Object.entries(targets) as [ApplyMode, KubectlTarget][]).map(([mode, t]) => applyBundle(t, b, mode)));
    reports.push({ bundle: b.name, objects: b.objects.length, modes });
  }
  return reports;
}

/** Refusals and changes the check fails on. */
export function unexpected(reports: BundleReport[]): string[] {
  return reports.flatMap((r) =>
    r.modes.flatMap((m) => [
      ...m.refusals.filter((x) => !x.expected).map((x) => `${r.bundle} ${m.mode}: ${x.kind} ${x.name} refused: ${x.error}`),
      ...m.mismatches.map((x) => `${r.bundle} ${m.mode}: ${x.kind} ${x.name} read back changed at ${x.paths.slice(0, 5).join(', ')}`),
    ]),
  );
}

/** One table of bundles, then each refusal with its kind and error. */
export function formatReport(reports: BundleReport[]): string {
  const modes: ApplyMode[] = ['server-side', 'client-side'];
  const rows = [['bundle', 'objects', ...modes.map((m) => `accepted ${m}`), 'changed']];
  const total = { objects: 0, accepted: new Map<ApplyMode, number>() };
  for (const r of reports) {
    total.objects += r.objects;
    const cells = modes.map((m) => {
      const mr = r.modes.find((x) => x.mode === m);
      if (!mr) return '-';
      total.accepted.set(m, (total.accepted.get(m) ?? 0) + mr.accepted);
      return String(mr.accepted);
    });
    rows.push([r.bundle, String(r.objects), ...cells, String(r.modes.reduce((n, m) => n + m.mismatches.length, 0))]);
  }
  rows.push(['total', String(total.objects), ...modes.map((m) => (total.accepted.has(m) ? String(total.accepted.get(m)) : '-')), '']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  for (const r of reports) {
    for (const m of r.modes) {
      for (const x of m.refusals) lines.push(`  ${r.bundle} ${m.mode} refused ${x.kind} ${x.name}${x.expected ? ` (expected: ${x.expected})` : ''}: ${x.error}`);
      for (const x of m.mismatches) lines.push(`  ${r.bundle} ${m.mode} changed ${x.kind} ${x.name}: ${x.paths.slice(0, 5).join(', ')}`);
    }
  }
  return lines.join('\n');
}
