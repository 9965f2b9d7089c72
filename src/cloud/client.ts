// A client of the local cloud's HTTP JSON API (src/cloud/local-cloud.ts).
import type { Instance, InstanceFault, InstanceType, NodeGroup } from './api.js';
import type { LoadBalancer, LoadBalancerSpec } from './load-balancers.js';

export class CloudApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class CloudClient {
  constructor(
    private readonly endpoint: string,
    private readonly timeoutMs = 5000,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(new URL(path, this.endpoint), {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) throw new CloudApiError(res.status, (parsed as { error?: string } | undefined)?.error ?? `${method} ${path}: HTTP ${res.status}`);
    return parsed as T;
  }

  instanceTypes(): Promise<InstanceType[]> {
    return this.call('GET', '/v1/instance-types');
  }

  setInstanceType(t: InstanceType): Promise<InstanceType> {
    return this.call('PUT', `/v1/instance-types/${encodeURIComponent(t.name)}`, t);
  }

  nodeGroups(): Promise<NodeGroup[]> {
    return this.call('GET', '/v1/node-groups');
  }

  setNodeGroup(name: string, g: Partial<Omit<NodeGroup, 'name' | 'targetSize'>>): Promise<NodeGroup> {
    return this.call('PUT', `/v1/node-groups/${encodeURIComponent(name)}`, g);
  }

  createInstances(group: string, count: number, faults: InstanceFault[] = []): Promise<Instance[]> {
    return this.call('POST', `/v1/node-groups/${encodeURIComponent(group)}/instances`, { count, faults });
  }

  instances(group?: string): Promise<Instance[]> {
    return this.call('GET', `/v1/instances${group ? `?group=${encodeURIComponent(group)}` : ''}`);
  }

  /** The instance, or undefined when the cloud does not know it (any more). */
  async instance(id: string): Promise<Instance | undefined> {
    try {
      return await this.call<Instance>('GET', `/v1/instances/${encodeURIComponent(id)}`);
    } catch (e) {
      if (e instanceof CloudApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  deleteInstance(id: string): Promise<Instance> {
    return this.call('DELETE', `/v1/instances/${encodeURIComponent(id)}`);
  }

  /** Stops an instance, keeping it; `signal` tells its agent whether its node leaves or its whole cluster stops. */
  stopInstance(id: string, signal: 'SIGTERM' | 'SIGPWR' = 'SIGTERM'): Promise<Instance> {
    return this.call('POST', `/v1/instances/${encodeURIComponent(id)}/stop`, { signal });
  }

  startInstance(id: string): Promise<Instance> {
    return this.call('POST', `/v1/instances/${encodeURIComponent(id)}/start`);
  }

  applyFault(id: string, fault: InstanceFault): Promise<Instance> {
    return this.call('POST', `/v1/instances/${encodeURIComponent(id)}/faults`, { fault });
  }

  setLoadBalancer(name: string, spec: Omit<LoadBalancerSpec, 'name'>): Promise<LoadBalancer> {
    return this.call('PUT', `/v1/load-balancers/${encodeURIComponent(name)}`, spec);
  }

  /** The load balancer, or undefined when the cloud has none of that name. */
  async loadBalancer(name: string): Promise<LoadBalancer | undefined> {
    try {
      return await this.call<LoadBalancer>('GET', `/v1/load-balancers/${encodeURIComponent(name)}`);
    } catch (e) {
      if (e instanceof CloudApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  /** Deletes the load balancer; one already gone is no error. */
  async deleteLoadBalancer(name: string): Promise<void> {
    try {
      await this.call('DELETE', `/v1/load-balancers/${encodeURIComponent(name)}`);
    } catch (e) {
      if (!(e instanceof CloudApiError && e.code === 404)) throw e;
    }
  }
}
