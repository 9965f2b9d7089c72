// Where a webhook's Service reference leads: one ready address of the Service's endpoints for the
// Service port it names, as kube-apiserver's endpoint service resolver picks one (a random subset
// that has the port, a random address in it). Endpoints first; EndpointSlices (kubernetes.io/service-name)
// when a Service has no Endpoints object. The failures say what is missing in upstream's words.
import type { KubeObject } from '../../api/types.js';
import { arr, isObject, obj, objArr, optNum, str } from '../../api/kinds/json.js';
import { WebhookCallError } from './call-error.js';

/** Read access to the objects a Service reference resolves through (the server's watch caches). */
export interface ServiceEndpointObjects {
  service(namespace: string, name: string): Promise<KubeObject | undefined>;
  endpoints(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** The EndpointSlices labelled kubernetes.io/service-name=<name> in the namespace. */
  endpointSlices(namespace: string, name: string): KubeObject[];
}

export interface ResolvedEndpoint {
  host: string;
  port: number;
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

function servicePortName(svc: KubeObject, port: number, name: string): string {
  const found = objArr(obj(svc.spec).ports).find((p) => optNum(p.port) === port);
  if (!found) throw new WebhookCallError(`no service port ${port} found for service "${name}"`);
  return str(found.name);
}

function fromEndpoints(eps: KubeObject, portName: string): ResolvedEndpoint | undefined {
  const subsets = objArr(eps.subsets);
  const start = subsets.length > 0 ? Math.floor(Math.random() * subsets.length) : 0;
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(start + i) % subsets.length]!;
    const addresses = objArr(ss.addresses);
    if (addresses.length === 0) continue;
    const port = objArr(ss.ports).find((p) => str(p.name) === portName);
    if (port) return { host: str(pick(addresses).ip), port: optNum(port.port) ?? 0 };
  }
  return undefined;
}

function fromSlices(slices: readonly KubeObject[], portName: string): ResolvedEndpoint | undefined {
  const candidates: ResolvedEndpoint[] = [];
  for (const slice of slices) {
    const port = objArr(slice.ports).find((p) => str(p.name) === portName);
    const number = optNum(port?.port);
    if (number === undefined) continue;
    for (const ep of objArr(slice.endpoints)) {
      // Ready unless it says otherwise, as the EndpointSlice API defines an absent condition.
      if (isObject(ep.conditions) && ep.conditions.ready === false) continue;
      const address = arr(ep.addresses).map(str).find((a) => a !== '');
      if (address) candidates.push({ host: address, port: number });
    }
  }
  return candidates.length > 0 ? pick(candidates) : undefined;
}

/** One ready endpoint of Service namespace/name for its port `port`. */
export async function resolveServiceEndpoint(objects: ServiceEndpointObjects, namespace: string, name: string, port: number): Promise<ResolvedEndpoint> {
  const svc = await objects.service(namespace, name);
  if (!svc) throw new WebhookCallError(`service "${name}" not found`);
  const portName = servicePortName(svc, port, name);
  const type = str(obj(svc.spec).type) || 'ClusterIP';
  if (type === 'ExternalName') return { host: str(obj(svc.spec).externalName), port };
  if (type !== 'ClusterIP' && type !== 'NodePort' && type !== 'LoadBalancer') throw new WebhookCallError(`unsupported service type "${type}"`);
  const eps = await objects.endpoints(namespace, name);
  const found = eps ? fromEndpoints(eps, portName) : fromSlices(objects.endpointSlices(namespace, name), portName);
  if (!found) throw new WebhookCallError(`no endpoints available for service "${name}"`);
  return found;
}
