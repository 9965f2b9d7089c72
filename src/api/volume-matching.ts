// Which volume can serve which claim, and from which nodes: upstream's findMatchingVolume, shared
// by the volume binding controller and the scheduler (which pre-binds a WaitForFirstConsumer
// claim to a volume its node can reach).
import type { Node } from './kinds/node.js';
import { arr, obj, str } from './kinds/json.js';
import { storageClassOf } from './kinds/persistentvolume.js';
import { volumeNodeMatcher } from './kinds/volume-provisioning.js';
import { matchLabelSelectorObject } from './labels.js';
import { compareQuantities, isValidQuantity, quantityText } from './quantity.js';
import type { KubeObject } from './types.js';

function storageOf(q: unknown): string {
  const text = quantityText(q);
  return isValidQuantity(text) ? text : '0';
}

/** Whether `volume` can serve `claim` (upstream's findMatchingVolume, less node topology). */
export function fits(volume: KubeObject, claim: KubeObject): boolean {
  const vs = obj(volume.spec);
  const cs = obj(claim.spec);
  if (volume.metadata.deletionTimestamp || storageClassOf(volume) !== storageClassOf(claim)) return false;
  if ((str(vs.volumeMode) || 'Filesystem') !== (str(cs.volumeMode) || 'Filesystem')) return false;
  const modes = new Set(arr(vs.accessModes).map(str));
  if (!arr(cs.accessModes).every((m) => modes.has(str(m)))) return false;
  const wanted = storageOf(obj(obj(cs.resources).requests).storage);
  if (compareQuantities(storageOf(obj(vs.capacity).storage), wanted) < 0) return false;
  if (cs.selector !== undefined && cs.selector !== null && !matchLabelSelectorObject(cs.selector, volume.metadata.labels)) return false;
  return true;
}

function capacityOf(volume: KubeObject): string {
  return storageOf(obj(obj(volume.spec).capacity).storage);
}

export function smallest(volumes: KubeObject[]): KubeObject | undefined {
  let best: KubeObject | undefined;
  for (const v of volumes) if (!best || compareQuantities(capacityOf(v), capacityOf(best)) < 0) best = v;
  return best;
}

/** Whether a node can reach the volume (a volume without node affinity: any node). */
export function reachableFrom(volume: KubeObject, node: Pick<Node, 'metadata'> | undefined, nodeName: string): boolean {
  const matcher = volumeNodeMatcher(volume);
  return !matcher || matcher(node?.metadata.labels ?? {}, nodeName);
}


/** A volume no claim holds or waits for, that fits the claim. */
export function freeFor(volume: KubeObject, claim: KubeObject): boolean {
  return !str(obj(obj(volume.spec).claimRef).name) && str(obj(volume.status).phase) !== 'Released' && fits(volume, claim);
}
