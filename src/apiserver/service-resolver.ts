// Where a Service reference answers (an APIService's, an admission or conversion webhook's): its
// ready endpoints, as kube-apiserver resolves with --enable-aggregator-routing (skiff has no
// service proxy on the control plane to reach a cluster IP through). The Service port named by
// number picks, by its name, the endpoint port, from the Service's EndpointSlices or, for
// hand-written Endpoints without slices, its Endpoints. Why nothing answers is told in upstream's
// availability reasons and messages; the webhook client words them as its own errors.
import type { Service, ServicePort } from '../api/kinds/service.js';
import type { Endpoints } from '../api/kinds/endpoints.js';
import type { EndpointSlice } from '../api/kinds/endpointslice.js';
import { DEFAULT_SERVICE_PORT, type ServiceReference } from '../api/kinds/apiservice.js';

/** What the resolver reads, from the server's watch caches. */
export interface ServiceObjects {
  service(namespace: string, name: string): Service | undefined;
  endpoints(namespace: string, name: string): Endpoints | undefined;
  /** The EndpointSlices labelled as the Service's (kubernetes.io/service-name). */
  endpointSlices(namespace: string, name: string): EndpointSlice[];
}

export interface ResolvedEndpoint {
  host: string;
  port: number;
}

/** Why a Service has no endpoint to call: upstream's availability reason and message. */
export interface Unresolved {
  reason: 'ServiceNotFound' | 'ServicePortError' | 'EndpointsNotFound' | 'MissingEndpoints';
  message: string;
}

export type Resolution = { ok: true; endpoints: ResolvedEndpoint[] } | ({ ok: false } & Unresolved);

/** Every ready endpoint of the Service `ref` names, or why there is none. */
export function resolveService(ref: ServiceReference, objects: ServiceObjects): Resolution {
  const namespace = ref.namespace ?? '';
  const name = ref.name ?? '';
  const port = ref.port ?? DEFAULT_SERVICE_PORT;
  const svc = objects.service(namespace, name);
  const where = `service/${name} in ${JSON.stringify(namespace)}`;
  if (!svc) return { ok: false, reason: 'ServiceNotFound', message: `${where} is not present` };
  if (svc.spec?.type === 'ExternalName') {
    const host = svc.spec.externalName ?? '';
    return host ? { ok: true, endpoints: [{ host, port }] } : { ok: false, reason: 'MissingEndpoints', message: `${where} has no externalName` };
  }
  const servicePort = (svc.spec?.ports ?? []).find((p) => p.port === port);
  if (!servicePort) return { ok: false, reason: 'ServicePortError', message: `${where} is not listening on port ${port}` };
  const portName = servicePort.name ?? '';
  const slices = objects.endpointSlices(namespace, name);
  if (slices.length > 0) {
    const found = fromSlices(slices, portName);
    if (found.length > 0) return { ok: true, endpoints: found };
    return { ok: false, reason: 'MissingEndpoints', message: `endpointslices for ${where} have no addresses with port name ${JSON.stringify(portName)}` };
  }
  const endpoints = objects.endpoints(namespace, name);
  if (!endpoints) return { ok: false, reason: 'EndpointsNotFound', message: `cannot find endpoints for ${where}` };
  const found = fromEndpoints(endpoints, servicePort);
  if (found.length > 0) return { ok: true, endpoints: found };
  return { ok: false, reason: 'MissingEndpoints', message: `endpoints for ${where} have no addresses with port name ${JSON.stringify(portName)}` };
}

/** Ready endpoints (ready unset counts as ready, as upstream reads it) with the port of that name. */
function fromSlices(slices: readonly EndpointSlice[], portName: string): ResolvedEndpoint[] {
  const out: ResolvedEndpoint[] = [];
  for (const slice of slices) {
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
    if (port === undefined) continue;
    for (const e of slice.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const host of e.addresses ?? []) out.push({ host, port });
    }
  }
  return out;
}

function fromEndpoints(endpoints: Endpoints, servicePort: ServicePort): ResolvedEndpoint[] {
  const out: ResolvedEndpoint[] = [];
  for (const subset of endpoints.subsets ?? []) {
    const port = (subset.ports ?? []).find((p) => (p.name ?? '') === (servicePort.name ?? ''))?.port;
    if (port === undefined) continue;
    for (const a of subset.addresses ?? []) out.push({ host: a.ip, port });
  }
  return out;
}

/** One endpoint, chosen at random so load spreads over a Service's servers. */
export function pickEndpoint(endpoints: readonly ResolvedEndpoint[]): ResolvedEndpoint {
  return endpoints[Math.floor(Math.random() * endpoints.length)]!;
}

/** host:port in a URL (IPv6 in brackets). */
export function hostPort(e: ResolvedEndpoint): string {
  return `${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;
}

/** The name an extension server's certificate is checked against: `<service>.<namespace>.svc`, as upstream. */
export function serviceServerName(ref: ServiceReference): string {
  return `${ref.name ?? ''}.${ref.namespace ?? ''}.svc`;
}
