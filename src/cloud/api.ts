// The local cloud's API: what `skiff cloud serve` serves over HTTP JSON and what the control plane's
// `local` cloud provider reads. Shaped like a small infrastructure API: instance types, node groups
// and instances, each instance a machine (here a `skiff agent` process) with a provider ID.

export interface InstanceType {
  name: string;
  /** Cores, as a Kubernetes quantity ("8"). */
  cpu: string;
  /** Memory, as a Kubernetes quantity ("32Gi"). */
  memory: string;
  pods: number;
}

export interface NodeGroup {
  name: string;
  instanceType: string;
  /** Zones new instances are spread over, in turn. */
  zones: string[];
  minSize: number;
  maxSize: number;
  /** How many instances the group should have (instances not Terminated count). */
  targetSize: number;
}

/**
 * Pending: created, its machine starting. Running: its machine runs. Stopped: shut down but still
 * listed, its disk kept (the `shutdown` fault, or stopped with its cluster), until started again.
 * ShuttingDown: being deleted. Terminated: gone, kept for a while so callers see what happened to it.
 */
export type InstanceState = 'Pending' | 'Running' | 'Stopped' | 'ShuttingDown' | 'Terminated';

/**
 * What can go wrong with an instance, on purpose: `no-boot` never starts its agent, `classic` runs
 * an agent that behaves as upstream's kubelet (it never re-creates a deleted Node), `lost` kills
 * the machine and forgets it, `shutdown` stops it but keeps it listed.
 */
export type InstanceFault = 'no-boot' | 'classic' | 'lost' | 'shutdown';

export const INSTANCE_FAULTS: readonly InstanceFault[] = ['no-boot', 'classic', 'lost', 'shutdown'];

export interface Instance {
  id: string;
  group: string;
  /** `skiff://<group>/<id>`: the Node's spec.providerID. */
  providerID: string;
  /** The name its agent registers its Node under. */
  nodeName: string;
  instanceType: string;
  zone: string;
  region: string;
  state: InstanceState;
  /** RFC 3339. */
  createdAt: string;
  /** Faults applied to it, in order. */
  faults: InstanceFault[];
  /** The address its agent reports. */
  address: string;
}

export const PROVIDER_ID_PREFIX = 'skiff://';

export function providerIdOf(group: string, id: string): string {
  return `${PROVIDER_ID_PREFIX}${group}/${id}`;
}

/** The instance id in a `skiff://<group>/<id>` provider ID, or undefined. */
export function parseProviderId(providerID: string | undefined): { group: string; id: string } | undefined {
  if (!providerID?.startsWith(PROVIDER_ID_PREFIX)) return undefined;
  const rest = providerID.slice(PROVIDER_ID_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { group: rest.slice(0, slash), id: rest.slice(slash + 1) };
}
