// Where a webhook's Service reference leads: one ready endpoint of the Service's port, found as the
// aggregation layer finds an APIService's (../service-resolver.ts: EndpointSlices, or Endpoints for a
// Service without slices) and picked at random, as kube-apiserver's endpoint service resolver picks
// one. The failures say what is missing in upstream's words for a webhook call.
import type { Service } from '../../api/kinds/service.js';
import type { Endpoints } from '../../api/kinds/endpoints.js';
import type { EndpointSlice } from '../../api/kinds/endpointslice.js';
import { pickEndpoint, resolveService, type ResolvedEndpoint, type Unresolved } from '../service-resolver.js';
import { WebhookCallError } from './call-error.js';

/** Read access to the objects a Service reference resolves through (the server's watch caches, storage when they have not seen one). */
export interface ServiceEndpointObjects {
  service(namespace: string, name: string): Promise<Service | undefined>;
  endpoints(namespace: string, name: string): Promise<Endpoints | undefined>;
  /** The EndpointSlices labelled kubernetes.io/service-name=<name> in the namespace. */
  endpointSlices(namespace: string, name: string): EndpointSlice[];
}

/** Upstream's webhook resolver's wording for why a Service has no endpoint to call. */
function unresolvedMessage(u: Unresolved, name: string, port: number): string {
  switch (u.reason) {
    case 'ServiceNotFound':
      return `service "${name}" not found`;
    case 'ServicePortError':
      return `no service port ${port} found for service "${name}"`;
    default:
      return `no endpoints available for service "${name}"`;
  }
}

/** One ready endpoint of Service namespace/name for its port `port`. */
export async function resolveServiceEndpoint(objects: ServiceEndpointObjects, namespace: string, name: string, port: number): Promise<ResolvedEndpoint> {
  const [service, endpoints] = await Promise.all([objects.service(namespace, name), objects.endpoints(namespace, name)]);
  const resolved = resolveService({ namespace, name, port }, { service: () => service, endpoints: () => endpoints, endpointSlices: () => objects.endpointSlices(namespace, name) });
  if (!resolved.ok) throw new WebhookCallError(unresolvedMessage(resolved, name, port));
  return pickEndpoint(resolved.endpoints);
}
