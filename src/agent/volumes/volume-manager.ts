// A pod's volumes on the node, for runtimes whose containers have their own filesystem: each
// volume is a directory under the pod's directory (or a host path), bind-mounted by the runtime
// where the container's volumeMounts say. emptyDir (a tmpfs with medium: Memory), hostPath with
// its type checks, and the volumes whose files come from the API — configMap, secret, downwardAPI,
// projected (with a service-account token bound to the pod) — written atomically and rewritten
// while the pod runs, so a container sees changes in place, as with the kubelet.
// persistentVolumeClaim: the directory of the claim's bound volume (a hostPath or local volume on
// this node, as the local-path provisioner makes them), bind-mounted like a hostPath.
// On the process runtime (`claimsOnly`) only claims are set up: a host process cannot be given a
// mount, so each claim it mounts is a symlink at its mountPath under the pod's directory (the
// process's working directory unless the container sets one: `/data` is `./data`) and an
// environment variable SKIFF_VOLUME_<VOLUME NAME> naming the directory.
import { persistentVolumeSource } from '../../api/kinds/persistentvolume.js';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { Container, Pod, Volume } from '../../api/kinds/pod.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { isNotFound, type AgentApi } from '../api.js';
import { kindWord, readConfigData, type ConfigKind } from '../config-data.js';
import { fieldRefValue, resourceFieldValue, type FieldRefContext } from '../field-ref.js';
import { CreateContainerError, type ContainerMount } from '../runtimes/runtime.js';
import { validItemPath, writeAtomicDir, type AtomicFile } from './atomic-dir.js';

export interface VolumeManagerOptions {
  api: AgentApi;
  clock: Clock;
  log: Logger;
  /** The pod's directory on this node; its volumes go under it. */
  podDir(uid: string): string;
  fieldRefs(pod: Pod): FieldRefContext;
  allocatable(): Record<string, string>;
  /** Set up only persistentVolumeClaim volumes, given to host processes (the process runtime). */
  claimsOnly?: boolean;
}

/** The variable naming a claim's directory for a host process: SKIFF_VOLUME_ and the volume's name, upper-cased, other characters as `_`. */
export function claimEnvName(volume: string): string {
  return `SKIFF_VOLUME_${volume.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** What a pod's directory holds already: a mountPath may not take these names. */
const POD_DIR_ENTRIES = new Set(['state.json', 'logs', 'volumes']);

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const mode = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0o777 ? v : fallback);

/** A token the agent holds for a projected volume: renewed once 80 % of its life has passed, as the kubelet does. */
interface HeldToken {
  token: string;
  renewAt: number;
}

interface PodVolumes {
  /** Volume name → its directory (or host path). */
  paths: Map<string, string>;
  tokens: Map<string, HeldToken>;
}

/** Kinds whose content comes from the API and is kept up to date while the pod runs. */
const FROM_API = ['configMap', 'secret', 'downwardAPI', 'projected'] as const;

/** Which of those a volume is; undefined for any other. */
function apiSource(v: Volume): (typeof FROM_API)[number] | undefined {
  return FROM_API.find((k) => v[k] !== undefined && v[k] !== null);
}

/** Reads a ConfigMap's or Secret's data; one pass of writes asks for each object once. */
type Reads = (namespace: string, kind: ConfigKind, name: string) => Promise<Map<string, Buffer> | undefined>;

export class VolumeManager {
  private readonly pods = new Map<string, PodVolumes>();
  private seq = 0;

  constructor(private readonly o: VolumeManagerOptions) {}

  private dirOf(uid: string, plugin: string, name: string): string {
    return join(this.o.podDir(uid), 'volumes', plugin, name);
  }

  /** Sets up every volume of the pod (once; again for any that failed). Throws CreateContainerError saying which and why. */
  async setUp(pod: Pod, reads: Reads = this.reads()): Promise<void> {
    const uid = pod.metadata.uid!;
    let state = this.pods.get(uid);
    if (!state) {
      state = { paths: new Map(), tokens: new Map() };
      this.pods.set(uid, state);
    }
    for (const v of pod.spec?.volumes ?? []) {
      if (!v?.name || state.paths.has(v.name)) continue;
      if (this.o.claimsOnly && !v.persistentVolumeClaim) continue;
      try {
        state.paths.set(v.name, await this.setUpOne(pod, v, state, reads));
      } catch (e) {
        if (e instanceof CreateContainerError) throw e;
        throw new CreateContainerError('CreateContainerConfigError', `MountVolume.SetUp failed for volume "${v.name}": ${errorText(e)}`);
      }
    }
    if (this.o.claimsOnly) this.linkClaims(pod, state);
  }

  /** Host processes: a symlink at each claim's mountPath under the pod's directory. */
  private linkClaims(pod: Pod, state: PodVolumes): void {
    const podDir = this.o.podDir(pod.metadata.uid!);
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      for (const m of c.volumeMounts ?? []) {
        const target = state.paths.get(m.name);
        const rel = normalize(`./${m.mountPath ?? ''}`).replace(/\/+$/, '');
        if (!target || rel === '.' || rel.startsWith('..') || POD_DIR_ENTRIES.has(rel.split('/')[0]!)) continue;
        const link = join(podDir, rel);
        if (lstatSync(link, { throwIfNoEntry: false })) continue;
        mkdirSync(dirname(link), { recursive: true });
        symlinkSync(m.subPath && validItemPath(m.subPath) ? join(target, m.subPath) : target, link);
      }
    }
  }

  /** Host processes: SKIFF_VOLUME_<NAME> for each claim the container mounts. */
  claimEnv(pod: Pod, c: Container): Record<string, string> {
    const state = this.pods.get(pod.metadata.uid!);
    const out: Record<string, string> = {};
    for (const m of c.volumeMounts ?? []) {
      const path = state?.paths.get(m.name);
      if (path) out[claimEnvName(m.name)] = path;
    }
    return out;
  }

  /** Where each of the container's volumeMounts comes from on this node. */
  mounts(pod: Pod, c: Container): ContainerMount[] {
    const state = this.pods.get(pod.metadata.uid!);
    const out: ContainerMount[] = [];
    for (const m of c.volumeMounts ?? []) {
      const base = state?.paths.get(m.name);
      if (!base) throw new CreateContainerError('CreateContainerConfigError', `volume "${m.name}" is not set up`);
      let hostPath = base;
      if (m.subPath) {
        if (!validItemPath(m.subPath)) throw new CreateContainerError('CreateContainerConfigError', `subPath "${m.subPath}" must be a relative path without ".."`);
        hostPath = join(base, m.subPath);
        // As the kubelet: a missing subPath is made as a directory.
        if (!existsSync(hostPath)) mkdirSync(hostPath, { recursive: true });
      }
      out.push({ containerPath: m.mountPath, hostPath, readonly: m.readOnly === true || this.alwaysReadOnly(pod, m.name) });
    }
    return out;
  }

  /** Secret, configMap, downwardAPI and projected volumes, and a claim marked readOnly, are read-only in the container, whatever the mount says. */
  private alwaysReadOnly(pod: Pod, name: string): boolean {
    const v = (pod.spec?.volumes ?? []).find((x) => x?.name === name);
    return v !== undefined && (apiSource(v) !== undefined || v.persistentVolumeClaim?.readOnly === true);
  }

  /** A reader that asks the API for each object once, however many volumes of however many pods name it. */
  private reads(): Reads {
    const seen = new Map<string, Promise<Map<string, Buffer> | undefined>>();
    return (ns, kind, name) => {
      const key = `${kind}/${ns}/${name}`;
      let p = seen.get(key);
      if (!p) seen.set(key, (p = readConfigData(this.o.api, ns, kind, name)));
      return p;
    };
  }

  /**
   * Rewrites the API-backed volumes of running pods; a failure keeps the old content and is tried
   * again next time. Every pod has the cluster CA's ConfigMap in its token volume: it is read once
   * per namespace, not once per pod.
   */
  async refresh(pods: Pod[]): Promise<void> {
    const reads = this.reads();
    for (const pod of pods) {
      const state = this.pods.get(pod.metadata.uid!);
      if (!state) {
        // Adopted from an earlier agent: learn (and rewrite) its volumes.
        await this.setUp(pod, reads).catch((e: unknown) => this.o.log.debug({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, err: errorText(e) }, 'could not set up the volumes of an adopted pod'));
        continue;
      }
      for (const v of pod.spec?.volumes ?? []) {
        if (!v?.name || !state.paths.has(v.name) || !apiSource(v)) continue;
        try {
          if (await this.writeFromApi(pod, v, state, reads)) this.o.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, volume: v.name }, 'volume content updated');
        } catch (e) {
          this.o.log.debug({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, volume: v.name, err: errorText(e) }, 'could not refresh a volume');
        }
      }
    }
  }

  /** The pod is gone: unmount what was mounted for it and remove its volume directories (never a hostPath). */
  tearDown(uid: string): void {
    this.pods.delete(uid);
    const root = join(this.o.podDir(uid), 'volumes');
    if (!existsSync(root)) return;
    for (const m of mountsUnder(root).sort().reverse()) {
      try {
        execFileSync('umount', [m], { stdio: 'ignore' });
      } catch (e) {
        this.o.log.warn({ path: m, err: errorText(e) }, 'could not unmount a pod volume');
      }
    }
    rmSync(root, { recursive: true, force: true });
  }

  private async setUpOne(pod: Pod, v: Volume, state: PodVolumes, reads: Reads): Promise<string> {
    const uid = pod.metadata.uid!;
    if (v.hostPath) return checkHostPath(v.hostPath.path, v.hostPath.type ?? '');
    if (v.persistentVolumeClaim) return this.claimDir(pod.metadata.namespace ?? 'default', str(v.persistentVolumeClaim.claimName));
    const source = apiSource(v);
    if (source) {
      await this.writeFromApi(pod, v, state, reads);
      return this.dirOf(uid, PLUGIN_DIRS[source], v.name);
    }
    if (v.emptyDir || Object.keys(v).length === 1) {
      const dir = this.dirOf(uid, 'kubernetes.io~empty-dir', v.name);
      mkdirSync(dir, { recursive: true, mode: 0o777 });
      if (v.emptyDir?.medium === 'Memory' && !mountsUnder(dir).includes(dir)) {
        const size = v.emptyDir.sizeLimit ? `,size=${tmpfsSize(v.emptyDir.sizeLimit)}` : '';
        execFileSync('mount', ['-t', 'tmpfs', '-o', `mode=0777${size}`, 'tmpfs', dir], { stdio: 'pipe' });
      }
      return dir;
    }
    const kind = Object.keys(v).find((k) => k !== 'name') ?? 'unknown';
    throw new CreateContainerError('CreateContainerConfigError', `volume "${v.name}": ${kind} volumes are not supported by skiff`);
  }

  /** The directory of the volume a claim is bound to: a hostPath or local volume this node can reach. */
  private async claimDir(namespace: string, name: string): Promise<string> {
    const fail = (message: string): never => {
      throw new CreateContainerError('CreateContainerConfigError', message);
    };
    const claim = await this.o.api.get<{ spec?: Obj; status?: Obj }>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims/${encodeURIComponent(name)}`).catch((e: unknown) => {
      if (isNotFound(e)) fail(`persistentvolumeclaim "${name}" not found`);
      throw e;
    });
    const volumeName = str(obj(claim.spec).volumeName);
    if (!volumeName || str(obj(claim.status).phase) !== 'Bound') fail(`persistentvolumeclaim "${name}" is not bound`);
    const volume = await this.o.api.get<{ spec?: Obj }>(`/api/v1/persistentvolumes/${encodeURIComponent(volumeName)}`).catch((e: unknown) => {
      if (isNotFound(e)) fail(`persistentvolume "${volumeName}" not found`);
      throw e;
    });
    const spec = obj(volume.spec);
    if (spec.hostPath) return checkHostPath(str(obj(spec.hostPath).path), str(obj(spec.hostPath).type));
    if (spec.local) return checkHostPath(str(obj(spec.local).path), 'Directory');
    const kind = persistentVolumeSource(spec) ?? 'unknown';
    return fail(`persistentvolume "${volumeName}": ${kind} volumes are not supported by skiff`);
  }

  /** Writes a configMap, secret, downwardAPI or projected volume; answers whether its content changed. */
  private async writeFromApi(pod: Pod, v: Volume, state: PodVolumes, reads: Reads): Promise<boolean> {
    const source = apiSource(v)!;
    const files = new Map<string, AtomicFile>();
    const ns = pod.metadata.namespace ?? 'default';
    const defaultMode = mode(obj(v[source]).defaultMode, 0o644);
    const add = (kind: ConfigKind, name: string, src: Obj) => this.addConfig(files, reads, ns, kind, name, src, defaultMode, v.name);
    if (v.configMap) await add('configmaps', str(v.configMap.name), v.configMap as Obj);
    else if (v.secret) await add('secrets', str(v.secret.secretName), v.secret as Obj);
    else if (v.downwardAPI) this.addDownward(files, pod, obj(v.downwardAPI), defaultMode);
    else {
      for (const src of objs(obj(v.projected).sources)) {
        if (src.configMap) await add('configmaps', str(obj(src.configMap).name), obj(src.configMap));
        else if (src.secret) await add('secrets', str(obj(src.secret).name), obj(src.secret));
        else if (src.downwardAPI) this.addDownward(files, pod, obj(src.downwardAPI), defaultMode);
        else if (src.serviceAccountToken) {
          const t = obj(src.serviceAccountToken);
          const token = await this.token(pod, t, state, `${v.name}/${str(t.path)}`);
          // Readable by the container's user whoever it is; the directory is the pod's alone.
          if (validItemPath(str(t.path))) files.set(str(t.path), { data: Buffer.from(token), mode: defaultMode });
        }
      }
    }
    return writeAtomicDir(this.dirOf(pod.metadata.uid!, PLUGIN_DIRS[source], v.name), files, `${this.o.clock.now()}_${++this.seq}`);
  }

  private async addConfig(files: Map<string, AtomicFile>, reads: Reads, ns: string, kind: ConfigKind, name: string, src: Obj, defaultMode: number, volume: string): Promise<void> {
    const optional = src.optional === true;
    const data = await reads(ns, kind, name);
    if (!data) {
      if (optional) return;
      throw new CreateContainerError('CreateContainerConfigError', `MountVolume.SetUp failed for volume "${volume}": ${kindWord(kind)} "${name}" not found`);
    }
    const items = objs(src.items);
    if (items.length === 0) {
      for (const [k, b] of data) files.set(k, { data: b, mode: defaultMode });
      return;
    }
    for (const it of items) {
      const key = str(it.key);
      const b = data.get(key);
      if (!b) {
        if (optional) continue;
        throw new CreateContainerError('CreateContainerConfigError', `MountVolume.SetUp failed for volume "${volume}": configured to use key ${key} of ${kindWord(kind)} ${ns}/${name}, which does not have it`);
      }
      if (validItemPath(str(it.path))) files.set(str(it.path), { data: b, mode: mode(it.mode, defaultMode) });
    }
  }

  private addDownward(files: Map<string, AtomicFile>, pod: Pod, src: Obj, defaultMode: number): void {
    const ctx = this.o.fieldRefs(pod);
    for (const it of objs(src.items)) {
      const path = str(it.path);
      if (!validItemPath(path)) continue;
      let value: string | undefined;
      if (it.fieldRef) value = fieldRefValue(pod, str(obj(it.fieldRef).fieldPath), ctx);
      else if (it.resourceFieldRef) {
        const ref = obj(it.resourceFieldRef);
        const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === str(ref.containerName));
        value = resourceFieldValue(c?.resources, str(ref.resource), ref.divisor, this.o.allocatable());
      }
      if (value !== undefined) files.set(path, { data: Buffer.from(value), mode: mode(it.mode, defaultMode) });
    }
  }

  /** A TokenRequest for the pod's service account, bound to the pod (it dies with the pod). */
  private async token(pod: Pod, src: Obj, state: PodVolumes, key: string): Promise<string> {
    const now = this.o.clock.now();
    const held = state.tokens.get(key);
    if (held && now < held.renewAt) return held.token;
    const sa = pod.spec?.serviceAccountName || 'default';
    const ns = pod.metadata.namespace ?? 'default';
    const expirationSeconds = typeof src.expirationSeconds === 'number' ? src.expirationSeconds : 3600;
    const audience = str(src.audience);
    const r = await this.o.api.create<{ status?: { token?: string; expirationTimestamp?: string } }>(`/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { ...(audience ? { audiences: [audience] } : {}), expirationSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid } },
    });
    const token = r.status?.token;
    if (!token) throw new Error(`the API server issued no token for service account ${ns}/${sa}`);
    const expires = Date.parse(r.status?.expirationTimestamp ?? '') || now + expirationSeconds * 1000;
    state.tokens.set(key, { token, renewAt: now + Math.min(0.8 * (expires - now), 24 * 3600 * 1000) });
    return token;
  }
}

/** The kubelet's directory names for its volume plugins (tools that look under a pod's directory find them there). */
const PLUGIN_DIRS: Record<(typeof FROM_API)[number], string> = {
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
};

/** A Kubernetes quantity as tmpfs takes it (bytes). */
function tmpfsSize(q: string): string {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q.trim());
  if (!m) return q;
  const mult: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return String(Number(m[1]) * (m[2] ? mult[m[2]]! : 1));
}

/** Mount points at or below `dir`, from /proc/self/mounts. */
function mountsUnder(dir: string): string[] {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' ') ?? '')
      .filter((m) => m === dir || m.startsWith(`${dir}/`));
  } catch {
    return [];
  }
}

/** hostPath's type checks, as upstream's: the OrCreate types make what is missing. */
function checkHostPath(path: string, type: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  const fail = (what: string) => {
    throw new CreateContainerError('CreateContainerConfigError', `hostPath type check failed: ${path} ${what}`);
  };
  switch (type) {
    case 'DirectoryOrCreate':
      if (!st) mkdirSync(path, { recursive: true, mode: 0o755 });
      else if (!st.isDirectory()) fail('is not a directory');
      break;
    case 'Directory':
      if (!st?.isDirectory()) fail('is not a directory');
      break;
    case 'FileOrCreate':
      if (!st) writeFileSync(path, '', { mode: 0o644 });
      else if (!st.isFile()) fail('is not a file');
      break;
    case 'File':
      if (!st?.isFile()) fail('is not a file');
      break;
    case 'Socket':
      if (!st?.isSocket()) fail('is not a socket file');
      break;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) fail('is not a character device');
      break;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) fail('is not a block device');
      break;
    default:
      break;
  }
  return path;
}
