// What a fieldRef names (env valueFrom and downwardAPI volume items), as the kubelet reads it.
import type { Pod } from '../api/kinds/pod.js';
import { scaledValue } from '../api/quantity.js';

export interface FieldRefContext {
  nodeName: string;
  nodeIP: string;
  /** The pod's own address; the node's when the pod has none of its own (host network, host processes). */
  podIP: string;
}

/** Labels or annotations as the kubelet writes them into a file: key="value" per line, sorted by key. */
export function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

export function fieldRefValue(pod: Pod, path: string, ctx: FieldRefContext): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
    case 'spec.nodeName':
      return ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.nodeIP;
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP;
    default:
      return '';
  }
}

/**
 * The value of a resourceFieldRef as the kubelet computes it: the container's limit (the node's
 * allocatable when it sets none) or request (0 when none), divided by the divisor and rounded up,
 * e.g. limits.cpu "500m" → "1", with divisor "1m" → "500"; limits.memory "64Mi" → "67108864".
 */
export function resourceFieldValue(resources: unknown, resource: string, divisor: unknown, allocatable: Record<string, string>): string | undefined {
  const [kind, name, ...rest] = resource.split('.');
  if ((kind !== 'limits' && kind !== 'requests') || !name || rest.length > 0) return undefined;
  const set = (resources as Record<string, Record<string, string | number> | undefined> | undefined)?.[kind]?.[name];
  const quantity = set ?? (kind === 'limits' ? allocatable[name] : undefined) ?? '0';
  const by = typeof divisor === 'string' || typeof divisor === 'number' ? divisor : '1';
  try {
    // CPU divides in millicores ("1m" divisors), everything else in whole units.
    const scale = name === 'cpu' ? 3 : 0;
    const value = scaledValue(quantity, scale);
    const unit = scaledValue(by, scale);
    if (unit <= 0n) return undefined;
    return String(value <= 0n ? 0n : (value + unit - 1n) / unit);
  } catch {
    return undefined;
  }
}
