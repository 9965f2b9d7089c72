// Which labels a node may set on its own Node, as upstream's NodeRestriction admission and the
// kubelet's --node-labels check agree: anything outside the kubernetes.io and k8s.io namespaces,
// the kubelet's own labels (hostname, os, arch, instance type, zone and region) and the
// kubelet.kubernetes.io and node.kubernetes.io namespaces; never node-restriction.kubernetes.io,
// which exists so administrators can mark nodes in a way the nodes cannot fake.

const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
]);

const KUBELET_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
const RESTRICTED_NAMESPACE = 'node-restriction.kubernetes.io';

function inNamespace(ns: string, parent: string): boolean {
  return ns === parent || ns.endsWith(`.${parent}`);
}

/** Whether a node may set label `key` on its own Node. */
export function nodeMaySetLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const ns = key.slice(0, slash).toLowerCase();
  if (inNamespace(ns, RESTRICTED_NAMESPACE)) return false;
  if (!inNamespace(ns, 'kubernetes.io') && !inNamespace(ns, 'k8s.io')) return true;
  return KUBELET_LABELS.has(key) || KUBELET_NAMESPACES.some((allowed) => inNamespace(ns, allowed));
}

/** The keys of `labels` a node may not set, sorted as upstream lists them. */
export function labelsNodeMayNotSet(keys: Iterable<string>): string[] {
  return [...keys].filter((k) => !nodeMaySetLabel(k)).sort();
}

/** Label keys added, removed or changed from `old` to `next`. */
export function changedLabels(next: Record<string, string> | undefined, old: Record<string, string> | undefined): string[] {
  const a = next ?? {};
  const b = old ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]);
}
