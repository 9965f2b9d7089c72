// The local-path provisioner (k3s's `rancher.io/local-path`), one in every agent: only a node's
// own agent can make or remove a directory on its disk, so each agent provisions for the claims
// the scheduler selected to its node and reclaims the volumes it made there.
//   Provision: a claim handed to this provisioner (the storage-provisioner annotation, set by the
//     volume binding controller) and selected to this node gets a directory
//     <data dir>/storage/pvc-<uid>_<namespace>_<claim> and a PersistentVolume `pvc-<claim uid>`
//     for it: a hostPath (DirectoryOrCreate) with node affinity to this node, the claim's request
//     as capacity, the class's reclaim policy, pre-bound to the claim (the controller binds it).
//   Reclaim: a volume it made here, Released under reclaim Delete, loses its directory, then its
//     PersistentVolume. Retain keeps both (the volume stays Released).
// Decisions are the pure functions below; the class runs them from informers.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { arr, obj, str } from '../../api/kinds/json.js';
import { storageClassOf } from '../../api/kinds/persistentvolume.js';
import {
  claimProvisioner,
  LOCAL_PATH_DIR,
  LOCAL_PATH_PROVISIONER,
  nodeAffinityFor,
  PROVISIONED_BY_ANNOTATION,
  requestedStorage,
  selectedNodeOf,
  volumeNodeMatcher,
} from '../../api/kinds/volume-provisioning.js';
import { isValidQuantity } from '../../api/quantity.js';
import type { KubeObject } from '../../api/types.js';
import { Informer, objectKeyOf, stripManagedFields, type ListWatchSource } from '../../client/informer.js';
import type { ApiClient } from '../../client/rest.js';
import { WorkQueue } from '../../client/workqueue.js';
import type { Clock } from '../../util/clock.js';
import { errorText } from '../../util/error-text.js';
import type { Logger } from '../../util/log.js';
import { isAlreadyExists, isNotFound } from '../api.js';
import type { EventRecorder } from '../events.js';

const SUPPORTED_ACCESS_MODES = ['ReadWriteOnce', 'ReadWriteOncePod'];

/** Why this node makes no volume for the claim (undefined: it should make one). */
export function provisionSkipReason(claim: KubeObject, cls: KubeObject | undefined, nodeName: string): string | undefined {
  if (claim.metadata.deletionTimestamp) return 'being deleted';
  if (str(obj(claim.spec).volumeName)) return 'already bound';
  if (claimProvisioner(claim) !== LOCAL_PATH_PROVISIONER) return 'not handed to the local-path provisioner';
  if (!cls || str(cls.provisioner) !== LOCAL_PATH_PROVISIONER) return 'its class is not a local-path class';
  if (selectedNodeOf(claim) !== nodeName) return 'selected to another node';
  return undefined;
}

/** The name a claim's volume gets (external provisioners name it after the claim's uid). */
export function volumeNameFor(claim: KubeObject): string {
  return `pvc-${claim.metadata.uid}`;
}

/** The claim's directory under `root`, named as k3s names it: pvc-<uid>_<namespace>_<claim>. */
export function directoryFor(claim: KubeObject, root: string): string {
  return join(root, `${volumeNameFor(claim)}_${claim.metadata.namespace}_${claim.metadata.name}`);
}

/** The PersistentVolume for a claim selected to this node, or why none can be made. */
export function localPathVolume(claim: KubeObject, cls: KubeObject, nodeName: string, root: string): { volume: KubeObject; dir: string } | { error: string } {
  const spec = obj(claim.spec);
  const modes = arr(spec.accessModes).map(str);
  const unsupported = modes.filter((m) => !SUPPORTED_ACCESS_MODES.includes(m));
  if (unsupported.length > 0) return { error: `access mode ${unsupported.join(', ')} is not supported: a local-path volume is one node's directory (ReadWriteOnce, ReadWriteOncePod)` };
  if (str(spec.volumeMode) === 'Block') return { error: 'volumeMode Block is not supported: a local-path volume is a directory' };
  const storage = requestedStorage(claim);
  if (!isValidQuantity(storage)) return { error: 'the claim requests no storage (spec.resources.requests.storage)' };
  const dir = directoryFor(claim, root);
  const volume: KubeObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: volumeNameFor(claim), annotations: { [PROVISIONED_BY_ANNOTATION]: LOCAL_PATH_PROVISIONER } },
    spec: {
      capacity: { storage },
      accessModes: modes.length > 0 ? modes : ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: str(cls.reclaimPolicy) || 'Delete',
      storageClassName: storageClassOf(claim),
      volumeMode: 'Filesystem',
      hostPath: { path: dir, type: 'DirectoryOrCreate' },
      nodeAffinity: nodeAffinityFor(nodeName),
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion },
    },
  };
  const options = arr(cls.mountOptions);
  if (options.length > 0) (volume.spec as Record<string, unknown>).mountOptions = options;
  return { volume, dir };
}

/**
 * The directory to remove and volume to delete, when a volume this provisioner made on this node
 * is Released under reclaim Delete. Only a directory directly under `root` is ever removed, whatever
 * a volume claims to be.
 */
export function reclaimTarget(volume: KubeObject, nodeName: string, root: string): { dir: string } | undefined {
  if (volume.metadata.annotations?.[PROVISIONED_BY_ANNOTATION] !== LOCAL_PATH_PROVISIONER) return undefined;
  const spec = obj(volume.spec);
  if (str(obj(volume.status).phase) !== 'Released' || str(spec.persistentVolumeReclaimPolicy) !== 'Delete') return undefined;
  const matcher = volumeNodeMatcher(volume);
  if (!matcher || !matcher({ 'kubernetes.io/hostname': nodeName }, nodeName)) return undefined;
  const dir = resolve(str(obj(spec.hostPath).path) || str(obj(spec.local).path) || '/');
  if (dirname(dir) !== resolve(root) || !basename(dir).startsWith('pvc-')) return undefined;
  return { dir };
}

export interface LocalPathProvisionerOptions {
  api: ListWatchSource & Pick<ApiClient, 'create' | 'delete'>;
  clock: Clock;
  log: Logger;
  nodeName: string;
  /** The agent's data dir: volumes live under its storage/ directory. */
  dataDir: string;
  events: EventRecorder;
}

/** The claim with its kind (a listed item may come without one), for its events. */
function claimObject(claim: KubeObject): KubeObject {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: claim.metadata };
}

const CLAIM = 'pvc:';
const VOLUME = 'pv:';

export class LocalPathProvisioner {
  readonly root: string;
  private readonly claims: Informer<KubeObject>;
  private readonly volumes: Informer<KubeObject>;
  private readonly classes: Informer<KubeObject>;
  private readonly queue: WorkQueue<string>;

  constructor(private readonly o: LocalPathProvisionerOptions) {
    this.root = join(resolve(o.dataDir), LOCAL_PATH_DIR);
    const inf = (path: string) => new Informer<KubeObject>(o.api, { path, clock: o.clock, log: o.log, transform: stripManagedFields });
    this.claims = inf('/api/v1/persistentvolumeclaims');
    this.volumes = inf('/api/v1/persistentvolumes');
    this.classes = inf('/apis/storage.k8s.io/v1/storageclasses');
    this.queue = new WorkQueue<string>(o.clock, 500, 30_000);
    const claim = (c: KubeObject) => {
      if (selectedNodeOf(c) === o.nodeName) this.queue.add(CLAIM + objectKeyOf(c));
    };
    const volume = (v: KubeObject) => {
      if (v.metadata.annotations?.[PROVISIONED_BY_ANNOTATION] === LOCAL_PATH_PROVISIONER) this.queue.add(VOLUME + v.metadata.name!);
    };
    this.claims.addHandlers({ add: claim, update: (_o, c) => claim(c) });
    this.volumes.addHandlers({ add: volume, update: (_o, v) => volume(v) });
    // A class created after its claims: look at this node's claims again.
    this.classes.addHandlers({ add: () => this.claims.list().forEach(claim) });
  }

  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.queue.shutdown(), { once: true });
    const informers = [this.claims.run(signal), this.volumes.run(signal), this.classes.run(signal)];
    await Promise.all([this.claims.waitForSync(), this.volumes.waitForSync(), this.classes.waitForSync()]);
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) break;
      try {
        if (key.startsWith(CLAIM)) await this.provision(key.slice(CLAIM.length));
        else await this.reclaim(key.slice(VOLUME.length));
        this.queue.forget(key);
      } catch (e) {
        this.o.log.debug({ key, err: errorText(e) }, 'local-path provisioning failed; retrying');
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
    }
    await Promise.allSettled(informers);
  }

  private async provision(key: string): Promise<void> {
    const claim = this.claims.get(key);
    if (!claim) return;
    const cls = this.classes.get(storageClassOf(claim));
    if (provisionSkipReason(claim, cls, this.o.nodeName) !== undefined) return;
    const name = volumeNameFor(claim);
    if (this.volumes.get(name)) return;
    const made = localPathVolume(claim, cls!, this.o.nodeName, this.root);
    if ('error' in made) {
      void this.o.events.object(claimObject(claim), 'ProvisioningFailed', `failed to provision volume with StorageClass "${storageClassOf(claim)}": ${made.error}`, 'Warning');
      return;
    }
    void this.o.events.object(claimObject(claim), 'Provisioning', `External provisioner is provisioning volume for claim "${key}"`);
    mkdirSync(made.dir, { recursive: true });
    // Writable by whatever user the pod's containers run as, as k3s's provisioner makes it (the umask would narrow mkdir's mode).
    chmodSync(made.dir, 0o777);
    try {
      await this.o.api.create('/api/v1/persistentvolumes', made.volume);
    } catch (e) {
      if (!isAlreadyExists(e)) {
        void this.o.events.object(claimObject(claim), 'ProvisioningFailed', `failed to provision volume with StorageClass "${storageClassOf(claim)}": ${errorText(e)}`, 'Warning');
        throw e;
      }
    }
    this.o.log.info({ claim: key, volume: name, path: made.dir }, 'local-path volume provisioned');
    void this.o.events.object(claimObject(claim), 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
  }

  private async reclaim(name: string): Promise<void> {
    const volume = this.volumes.get(name);
    if (!volume || volume.metadata.deletionTimestamp) return;
    const target = reclaimTarget(volume, this.o.nodeName, this.root);
    if (!target) return;
    rmSync(target.dir, { recursive: true, force: true });
    try {
      await this.o.api.delete(`/api/v1/persistentvolumes/${encodeURIComponent(name)}`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    this.o.log.info({ volume: name, path: target.dir }, 'local-path volume deleted');
  }
}
