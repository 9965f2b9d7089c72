// Volume binding controller (upstream's persistentvolume-binder and the pvc/pv-protection
// controllers): binds each Pending claim to an Available volume that fits it, keeps volume phases
// (Available, Bound, Released) and claim phases (Pending, Bound, Lost) in step with claimRef and
// volumeName, applies the reclaim policy of a volume whose claim is gone (Retain keeps it
// Released; Delete deletes it, unless a provisioner made it: that provisioner deletes it and its
// storage), and removes the protection finalizers once no pod uses a claim and no claim a volume.
// A claim whose StorageClass says WaitForFirstConsumer waits for a node: the one the scheduler
// selected for its first pod (or the node of a pod placed by spec.nodeName, which no scheduler
// sees); it then takes a volume that node can reach, or, with none, is handed to its class's
// provisioner through the storage-provisioner annotations, as upstream hands claims to external
// provisioners.
import { isStatusError } from '../api/errors.js';
import { arr, isObject, obj, str } from '../api/kinds/json.js';
import type { Pod } from '../api/kinds/pod.js';
import { storageClassOf } from '../api/kinds/persistentvolume.js';
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../api/kinds/volume-protection.js';
import type { Node } from '../api/kinds/node.js';
import {
  BETA_STORAGE_PROVISIONER_ANNOTATION,
  claimProvisioner,
  NO_PROVISIONER,
  PROVISIONED_BY_ANNOTATION,
  selectedNodeOf,
  STORAGE_PROVISIONER_ANNOTATION,
} from '../api/kinds/volume-provisioning.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { freeFor, reachableFrom, smallest } from '../api/volume-matching.js';
import type { KubeObject } from '../api/types.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { PATHS } from '../controller-kit/informers.js';
import { KeyIndex } from '../controller-kit/key-index.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { rfc3339 } from '../util/time.js';
import { isPodTerminal, objectPath } from './pod-control.js';

/** Set on a claim once bound, and when the controller (not the user) chose its volume. */
const BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
const BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';

const CLAIM = 'pvc:';
const VOLUME = 'pv:';

export class VolumeBindingController implements Controller {
  readonly name = 'persistentvolume-binder';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // The binder only reads what it is informed of (it writes through the API).
    const volumes = ctx.informers.for<KubeObject>(PATHS.persistentvolumes, { readOnly: true });
    const claims = ctx.informers.for<KubeObject>(PATHS.persistentvolumeclaims, { readOnly: true });
    const classes = ctx.informers.for<KubeObject>(PATHS.storageclasses, { readOnly: true });
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const nodes = ctx.informers.for<Node>(PATHS.nodes, { readOnly: true });
    // Registered before the handlers below, so they read indexes that already include the event.
    const volumesByClaim = new KeyIndex(volumes, (v) => {
      const ref = claimRefKey(v);
      return ref ? [ref] : [];
    });
    const podsByClaim = new KeyIndex(pods, (p) => claimNamesOf(p).map((name) => `${p.metadata.namespace}/${name}`));
    const loop = new ReconcileLoop(new VolumeBinder(ctx, volumes, claims, classes, nodes, volumesByClaim, podsByClaim), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    const claimChanged = (c: KubeObject) => {
      loop.enqueue(CLAIM + objectKeyOf(c));
      const volumeName = str(obj(c.spec).volumeName);
      if (volumeName) loop.enqueue(VOLUME + volumeName);
      // A volume whose claim went away is Released (or reclaimed).
      for (const v of volumesByClaim.get(objectKeyOf(c))) loop.enqueue(VOLUME + v.metadata.name!);
    };
    const volumeChanged = (v: KubeObject) => {
      loop.enqueue(VOLUME + v.metadata.name!);
      const ref = claimRefKey(v);
      if (ref) loop.enqueue(CLAIM + ref);
      // A volume that became free may fit a claim that waits.
      else for (const c of claims.list()) if (!str(obj(c.spec).volumeName)) loop.enqueue(CLAIM + objectKeyOf(c));
    };
    const podChanged = (p: Pod) => {
      for (const name of claimNamesOf(p)) loop.enqueue(`${CLAIM}${p.metadata.namespace}/${name}`);
    };
    claims.addHandlers({ add: claimChanged, update: (_o, n) => claimChanged(n), delete: claimChanged });
    volumes.addHandlers({ add: volumeChanged, update: (_o, n) => volumeChanged(n), delete: volumeChanged });
    pods.addHandlers({ add: podChanged, update: (_o, n) => podChanged(n), delete: podChanged });
    void Promise.all([volumes.waitForSync(), claims.waitForSync(), classes.waitForSync(), pods.waitForSync(), nodes.waitForSync()]).then(() => loop.run(signal));
  }
}

function claimRefKey(v: KubeObject): string | undefined {
  const ref = obj(obj(v.spec).claimRef);
  return str(ref.name) ? `${str(ref.namespace)}/${str(ref.name)}` : undefined;
}

/** A claimRef without a uid waits for whichever claim takes its name; one with a uid is that claim's only. */
function claimRefUidAllows(v: KubeObject, claim: KubeObject): boolean {
  const uid = str(obj(obj(v.spec).claimRef).uid);
  return !uid || uid === claim.metadata.uid;
}

/** The claims a pod mounts: named ones, and the claims of its ephemeral volumes (<pod>-<volume>). */
function claimNamesOf(p: Pod): string[] {
  const out: string[] = [];
  for (const v of arr(obj(p.spec).volumes)) {
    const volume = obj(v);
    const claimName = str(obj(volume.persistentVolumeClaim).claimName);
    if (claimName) out.push(claimName);
    else if (isObject(volume.ephemeral)) out.push(`${p.metadata.name}-${str(volume.name)}`);
  }
  return out;
}

function phaseOf(o: KubeObject): string {
  return str(obj(o.status).phase);
}

/** The claim with its kind for an event's involvedObject (whatever the cache's copy carries). */
function asClaim(claim: KubeObject): KubeObject {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: claim.metadata };
}

/** Upstream's message while a claim waits for its external provisioner. */
export function externalProvisioningMessage(provisioner: string): string {
  return `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`;
}

class VolumeBinder implements Reconciler {
  readonly name = 'persistentvolume-binder';
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly volumes: Informer<KubeObject>,
    private readonly claims: Informer<KubeObject>,
    private readonly classes: Informer<KubeObject>,
    private readonly nodes: Informer<Node>,
    private readonly volumesByClaim: KeyIndex<KubeObject>,
    private readonly podsByClaim: KeyIndex<Pod>,
  ) {
    this.recorder = ctx.recorder('persistentvolume-controller');
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    try {
      if (key.startsWith(CLAIM)) await this.syncClaim(key.slice(CLAIM.length), signal);
      else await this.syncVolume(key.slice(VOLUME.length), signal);
    } catch (e) {
      // The informers bring the newer object, which queues the key again.
      if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
    }
  }

  private claimInUse(key: string): boolean {
    return this.podsByClaim.get(key).some((p) => !isPodTerminal(p));
  }

  private async syncClaim(key: string, signal: AbortSignal): Promise<void> {
    const claim = this.claims.get(key);
    if (!claim) return;
    const namespace = claim.metadata.namespace!;
    const name = claim.metadata.name!;
    const path = objectPath('/api/v1', 'persistentvolumeclaims', namespace, name);
    if (claim.metadata.deletionTimestamp) {
      if (claim.metadata.finalizers?.includes(PVC_PROTECTION_FINALIZER) && !this.claimInUse(key)) await this.dropFinalizer(claim, path, PVC_PROTECTION_FINALIZER, signal);
      return;
    }
    const volumeName = str(obj(claim.spec).volumeName);
    if (volumeName) {
      const volume = this.volumes.get(volumeName);
      if (!volume) {
        // Its volume is gone: the data a Bound claim pointed at is lost.
        if (phaseOf(claim) === 'Bound') await this.setClaimStatus(claim, { phase: 'Lost' }, signal);
        return;
      }
      const ref = obj(obj(volume.spec).claimRef);
      const refMatches = str(ref.namespace) === namespace && str(ref.name) === name && (!str(ref.uid) || str(ref.uid) === claim.metadata.uid);
      if (!str(ref.name)) await this.bind(volume, claim, false, signal);
      else if (refMatches) await this.finishBinding(volume, claim, false, signal);
      return;
    }
    // A volume pre-bound to this claim wins (by its user, the scheduler or a provisioner); otherwise the smallest volume that fits.
    // A claimRef naming another claim's uid (a released volume whose claim was recreated under the same name) is not this claim's.
    const preBound = this.volumesByClaim.get(key).find((v) => claimRefUidAllows(v, claim));
    if (preBound) {
      await this.bind(preBound, claim, true, signal);
      return;
    }
    const free = (v: KubeObject) => freeFor(v, claim);
    if (this.waitsForConsumer(claim)) {
      const node = selectedNodeOf(claim) || this.nodeOfUser(key);
      if (!node) {
        this.recorder.event(asClaim(claim), 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
        return;
      }
      const chosen = smallest(this.volumes.list().filter((v) => free(v) && reachableFrom(v, this.nodes.get(node), node)));
      if (chosen) await this.bind(chosen, claim, true, signal);
      else if (selectedNodeOf(claim)) await this.provision(claim, signal);
      return;
    }
    const chosen = smallest(this.volumes.list().filter(free));
    if (chosen) await this.bind(chosen, claim, true, signal);
    else await this.provision(claim, signal);
  }

  /** The node of a running pod using the claim that no scheduler placed (spec.nodeName set at creation). */
  private nodeOfUser(key: string): string {
    return this.podsByClaim.get(key).find((p) => !isPodTerminal(p) && p.spec?.nodeName)?.spec?.nodeName ?? '';
  }

  /**
   * Hands the claim to its class's provisioner (upstream's provisionClaim for a provisioner outside
   * the controller): both storage-provisioner annotations, and an event saying who is awaited.
   */
  private async provision(claim: KubeObject, signal: AbortSignal): Promise<void> {
    const cls = this.classes.get(storageClassOf(claim));
    const provisioner = str(cls?.provisioner);
    if (!cls || !provisioner || provisioner === NO_PROVISIONER || claimProvisioner(claim) === provisioner) return;
    const path = objectPath('/api/v1', 'persistentvolumeclaims', claim.metadata.namespace!, claim.metadata.name!);
    const annotations = { [STORAGE_PROVISIONER_ANNOTATION]: provisioner, [BETA_STORAGE_PROVISIONER_ANNOTATION]: provisioner };
    await this.ctx.client.patch(path, { metadata: { resourceVersion: claim.metadata.resourceVersion, annotations } }, 'merge', { signal });
    this.recorder.event(asClaim(claim), 'Normal', 'ExternalProvisioning', externalProvisioningMessage(provisioner));
  }

  private waitsForConsumer(claim: KubeObject): boolean {
    const cls = this.classes.get(storageClassOf(claim));
    return cls?.volumeBindingMode === 'WaitForFirstConsumer';
  }

  /** Points the volume at the claim (claimRef, then phase Bound) and the claim at the volume. */
  private async bind(volume: KubeObject, claim: KubeObject, chosenByController: boolean, signal: AbortSignal): Promise<void> {
    const volumePath = `/api/v1/persistentvolumes/${volume.metadata.name}`;
    const claimRef = { kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid, apiVersion: 'v1', resourceVersion: claim.metadata.resourceVersion };
    const updated = await this.ctx.client.patch<KubeObject>(volumePath, { metadata: { resourceVersion: volume.metadata.resourceVersion }, spec: { claimRef } }, 'merge', { signal });
    await this.finishBinding(updated, claim, chosenByController, signal);
  }

  private async finishBinding(volume: KubeObject, claim: KubeObject, chosenByController: boolean, signal: AbortSignal): Promise<void> {
    if (phaseOf(volume) !== 'Bound') await this.setVolumeStatus(volume, { phase: 'Bound' }, signal);
    const claimPath = objectPath('/api/v1', 'persistentvolumeclaims', claim.metadata.namespace!, claim.metadata.name!);
    let current = claim;
    if (str(obj(claim.spec).volumeName) !== volume.metadata.name || claim.metadata.annotations?.[BIND_COMPLETED] !== 'yes') {
      const annotations: Record<string, string> = { [BIND_COMPLETED]: 'yes' };
      if (chosenByController) annotations[BOUND_BY_CONTROLLER] = 'yes';
      current = await this.ctx.client.patch<KubeObject>(claimPath, { metadata: { resourceVersion: claim.metadata.resourceVersion, annotations }, spec: { volumeName: volume.metadata.name } }, 'merge', { signal });
    }
    const vs = obj(volume.spec);
    if (phaseOf(current) !== 'Bound') await this.setClaimStatus(current, { phase: 'Bound', accessModes: vs.accessModes, capacity: vs.capacity }, signal);
  }

  private async syncVolume(name: string, signal: AbortSignal): Promise<void> {
    const volume = this.volumes.get(name);
    if (!volume) return;
    const path = `/api/v1/persistentvolumes/${name}`;
    if (volume.metadata.deletionTimestamp) {
      if (volume.metadata.finalizers?.includes(PV_PROTECTION_FINALIZER) && phaseOf(volume) !== 'Bound') await this.dropFinalizer(volume, path, PV_PROTECTION_FINALIZER, signal);
      return;
    }
    const spec = obj(volume.spec);
    const ref = obj(spec.claimRef);
    if (!str(ref.name)) {
      if (phaseOf(volume) !== 'Available') await this.setVolumeStatus(volume, { phase: 'Available' }, signal);
      return;
    }
    const claim = this.claims.get(`${str(ref.namespace)}/${str(ref.name)}`);
    const sameClaim = claim && (!str(ref.uid) || str(ref.uid) === claim.metadata.uid);
    if (sameClaim) {
      if (str(obj(claim.spec).volumeName) === name) {
        if (phaseOf(volume) !== 'Bound') await this.setVolumeStatus(volume, { phase: 'Bound' }, signal);
      } else if (phaseOf(volume) !== 'Available' && phaseOf(volume) !== 'Bound') {
        // Pre-bound to a claim that has not taken it yet.
        await this.setVolumeStatus(volume, { phase: 'Available' }, signal);
      }
      return;
    }
    if (!str(ref.uid)) {
      // Pre-bound to a claim that does not exist yet: it waits for it.
      if (phaseOf(volume) !== 'Available') await this.setVolumeStatus(volume, { phase: 'Available' }, signal);
      return;
    }
    // The claim it was bound to is gone.
    const policy = str(spec.persistentVolumeReclaimPolicy);
    if (phaseOf(volume) !== 'Released') {
      await this.setVolumeStatus(volume, { phase: 'Released' }, signal);
      return;
    }
    // A provisioner's volume is its to delete, storage first (upstream leaves it to the external provisioner).
    if (policy === 'Delete' && !volume.metadata.annotations?.[PROVISIONED_BY_ANNOTATION]) await this.ctx.client.delete(path, undefined, { signal });
    else if (policy === 'Recycle') {
      // Nothing scrubs skiff's volumes: a recycled volume is simply free again.
      await this.ctx.client.patch(path, { metadata: { resourceVersion: volume.metadata.resourceVersion }, spec: { claimRef: null } }, 'merge', { signal });
    }
  }

  private async setVolumeStatus(volume: KubeObject, status: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    const stamped = { ...status, lastPhaseTransitionTime: rfc3339(this.ctx.clock.now()) };
    await this.ctx.client.patch(`/api/v1/persistentvolumes/${volume.metadata.name}/status`, { metadata: { resourceVersion: volume.metadata.resourceVersion }, status: stamped }, 'merge', { signal });
  }

  private async setClaimStatus(claim: KubeObject, status: Record<string, unknown>, signal: AbortSignal): Promise<void> {
    const path = `${objectPath('/api/v1', 'persistentvolumeclaims', claim.metadata.namespace!, claim.metadata.name!)}/status`;
    await this.ctx.client.patch(path, { metadata: { resourceVersion: claim.metadata.resourceVersion }, status }, 'merge', { signal });
  }

  private async dropFinalizer(o: KubeObject, path: string, finalizer: string, signal: AbortSignal): Promise<void> {
    const finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    await this.ctx.client.patch(path, { metadata: { resourceVersion: o.metadata.resourceVersion, finalizers } }, 'merge', { signal });
  }
}
