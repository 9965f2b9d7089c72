// Zones and their disruption states, as upstream's node lifecycle controller computes them: the
// guard that stops evictions (and node deletion) when many nodes look dead at once, because then
// the likelier culprit is the control plane or the network, not the nodes.
import type { Node, NodeCondition } from '../api/kinds/node.js';

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

const REGION_LABELS = ['topology.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/region'];
const ZONE_LABELS = ['topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'];

/** Nodes with this label do not count in the zone math (upstream's exclude-disruption label). */
export const LABEL_EXCLUDE_DISRUPTION = 'node.kubernetes.io/exclude-disruption';

function firstLabel(node: Node, keys: string[]): string {
  const labels = node.metadata.labels ?? {};
  for (const k of keys) if (labels[k]) return labels[k];
  return '';
}

/** region + zone, the same key shape as upstream (region ":\0:" zone); "" for unlabelled nodes. */
export function zoneKeyOf(node: Node): string {
  const region = firstLabel(node, REGION_LABELS);
  const zone = firstLabel(node, ZONE_LABELS);
  if (!region && !zone) return '';
  return `${region}:\x00:${zone}`;
}

/** A readable zone name for logs. */
export function zoneName(key: string): string {
  return key === '' ? '<default>' : key.replace(':\x00:', '/');
}

export function isExcludedFromDisruption(node: Node): boolean {
  return LABEL_EXCLUDE_DISRUPTION in (node.metadata.labels ?? {});
}

/**
 * FullDisruption: no Ready node (and at least one not Ready); PartialDisruption: more than two not
 * Ready and at least `unhealthyThreshold` of the zone; otherwise Normal. A missing Ready
 * condition counts as not Ready.
 */
export function computeZoneState(readyConditions: (NodeCondition | undefined)[], unhealthyThreshold: number): { notReady: number; state: ZoneState } {
  let ready = 0;
  let notReady = 0;
  for (const c of readyConditions) {
    if (c?.status === 'True') ready++;
    else notReady++;
  }
  if (ready === 0 && notReady > 0) return { notReady, state: 'FullDisruption' };
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyThreshold) return { notReady, state: 'PartialDisruption' };
  return { notReady, state: 'Normal' };
}
