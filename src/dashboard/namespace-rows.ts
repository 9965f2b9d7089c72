// What the dashboard says of a namespace and of its Services: a namespace's phase and its pods by
// phase; a Service's type, address, ports and how many endpoints are ready behind it, as
// `kubectl get svc` and `kubectl get endpointslices` would tell. Pure, so tested without a cluster.
import type { Pod } from '../api/kinds/pod.js';
import type { KubeObject } from '../api/types.js';
import { countPod, emptyPodCounts } from './node-tile.js';
import type { NamespaceRow, ServiceRow } from './view.js';

/** The label that ties an EndpointSlice to its Service (discovery.k8s.io). */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface ServicePort {
  name?: string;
  port?: number;
  protocol?: string;
  nodePort?: number;
}

export interface SlimService extends KubeObject {
  spec?: { type?: string; clusterIP?: string; ports?: ServicePort[]; selector?: Record<string, string>; externalName?: string };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

export interface SlimEndpointSlice extends KubeObject {
  endpoints?: { conditions?: { ready?: boolean } }[];
}

/** What the dashboard keeps of a Service: what its row shows. */
export function slimService(s: SlimService): SlimService {
  const spec = s.spec ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.metadata.name, namespace: s.metadata.namespace, resourceVersion: s.metadata.resourceVersion },
    spec: {
      ...(spec.type ? { type: spec.type } : {}),
      ...(spec.clusterIP ? { clusterIP: spec.clusterIP } : {}),
      ...(spec.externalName ? { externalName: spec.externalName } : {}),
      ...(spec.selector ? { selector: spec.selector } : {}),
      ports: (spec.ports ?? []).map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, protocol: p.protocol ?? 'TCP', ...(p.nodePort ? { nodePort: p.nodePort } : {}) })),
    },
    ...(s.status?.loadBalancer?.ingress ? { status: { loadBalancer: { ingress: s.status.loadBalancer.ingress } } } : {}),
  };
}

/** kubectl's PORT(S) column: 80/TCP, 80:30080/TCP. */
function portsText(ports: ServicePort[]): string {
  return ports.map((p) => `${p.port ?? '?'}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

/**
 * A Service's row, from its namespace's EndpointSlices (undefined: the user may not read them).
 * Its state in a word: no selector (endpoints are someone else's to keep), no ready endpoint
 * (nothing answers), or how many are ready; a LoadBalancer without an address says so.
 */
export function serviceRow(s: SlimService, slices: SlimEndpointSlice[] | undefined): ServiceRow {
  const spec = s.spec ?? {};
  const type = spec.type ?? 'ClusterIP';
  const mine = (slices ?? []).filter((e) => e.metadata.namespace === s.metadata.namespace && e.metadata.labels?.[SERVICE_NAME_LABEL] === s.metadata.name);
  const endpoints = mine.flatMap((e) => e.endpoints ?? []);
  const ready = endpoints.filter((x) => x.conditions?.ready !== false).length;
  const ingress = s.status?.loadBalancer?.ingress ?? [];
  let state: string;
  if (type === 'ExternalName') state = `alias of ${spec.externalName ?? '?'}`;
  else if (type === 'LoadBalancer' && ingress.length === 0) state = 'external address pending';
  else if (!slices) state = 'endpoints not shown: this user may not list endpointslices';
  else if (!spec.selector && endpoints.length === 0) state = 'no selector';
  else state = ready === 0 ? 'no ready endpoints' : `${ready} of ${endpoints.length} endpoint${endpoints.length === 1 ? '' : 's'} ready`;
  return {
    namespace: s.metadata.namespace ?? 'default',
    name: s.metadata.name!,
    type,
    clusterIP: spec.clusterIP ?? '',
    ports: portsText(spec.ports ?? []),
    ready,
    state,
  };
}

/** Every namespace with its phase and its pods by phase (pods of a namespace not listed get one too). */
export function namespaceRows(namespaces: KubeObject[], pods: Iterable<Pod>, services: Iterable<KubeObject>): NamespaceRow[] {
  const rows = new Map<string, NamespaceRow>();
  // A namespace known only from its pods (the user may not list namespaces) has no phase to show.
  const row = (name: string, phase = '') => {
    let r = rows.get(name);
    if (!r) rows.set(name, (r = { name, phase, pods: emptyPodCounts(), services: 0 }));
    return r;
  };
  for (const ns of namespaces) {
    const status = (ns as KubeObject & { status?: { phase?: string } }).status;
    row(ns.metadata.name!, ns.metadata.deletionTimestamp ? 'Terminating' : (status?.phase ?? 'Active'));
  }
  for (const p of pods) countPod(row(p.metadata.namespace ?? 'default').pods, p);
  for (const s of services) row(s.metadata.namespace ?? 'default').services++;
  return [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
}
