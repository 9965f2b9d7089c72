// The `local` cloud provider: the CloudProvider interface on `skiff cloud serve`'s API.
import type { Node } from '../api/kinds/node.js';
import { parseProviderId, type Instance, type InstanceType, type NodeGroup as CloudGroup } from './api.js';
import { CloudClient } from './client.js';
import type { CloudInstance, CloudProvider, InstanceMetadata, LoadBalancers, NodeGroup } from './provider.js';

export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const REGION_LABEL = 'topology.kubernetes.io/region';

/** The instance a Node names: by providerID, as every cloud controller matches them. */
function instanceIdOf(node: Node): string | undefined {
  return parseProviderId(node.spec?.providerID)?.id;
}

export class LocalCloudProvider implements CloudProvider {
  private groups: CloudGroup[] = [];
  private types: InstanceType[] = [];
  readonly client: CloudClient;

  constructor(endpoint: string) {
    this.client = new CloudClient(endpoint);
  }

  name(): string {
    return 'local';
  }

  async refresh(): Promise<void> {
    [this.groups, this.types] = await Promise.all([this.client.nodeGroups(), this.client.instanceTypes()]);
  }

  nodeGroups(): NodeGroup[] {
    return this.groups.map((g) => new LocalNodeGroup(this, g));
  }

  nodeGroupForNode(node: Node): NodeGroup | undefined {
    const parsed = parseProviderId(node.spec?.providerID);
    const g = parsed && this.groups.find((x) => x.name === parsed.group);
    return g ? new LocalNodeGroup(this, g) : undefined;
  }

  async hasInstance(node: Node): Promise<boolean> {
    return this.instanceExists(node);
  }

  private async instanceOf(node: Node): Promise<Instance | undefined> {
    const id = instanceIdOf(node);
    return id ? this.client.instance(id) : undefined;
  }

  async instanceExists(node: Node): Promise<boolean> {
    const i = await this.instanceOf(node);
    return i !== undefined && i.state !== 'Terminated';
  }

  async instanceShutdown(node: Node): Promise<boolean> {
    return (await this.instanceOf(node))?.state === 'Stopped';
  }

  async instanceMetadata(node: Node): Promise<InstanceMetadata | undefined> {
    const i = await this.instanceOf(node);
    if (!i || i.state === 'Terminated') return undefined;
    return { providerID: i.providerID, instanceType: i.instanceType, zone: i.zone, region: i.region, addresses: [{ type: 'InternalIP', address: i.address }, { type: 'Hostname', address: i.nodeName }] };
  }

  loadBalancers(): LoadBalancers {
    return {
      ensure: async (req) => ({ ip: (await this.client.setLoadBalancer(req.name, { ports: req.ports, nodes: req.nodes })).ip }),
      delete: (name) => this.client.deleteLoadBalancer(name),
    };
  }

  instanceType(name: string): InstanceType | undefined {
    return this.types.find((t) => t.name === name);
  }
}

class LocalNodeGroup implements NodeGroup {
  constructor(
    private readonly provider: LocalCloudProvider,
    private readonly group: CloudGroup,
  ) {}

  id(): string {
    return this.group.name;
  }

  minSize(): number {
    return this.group.minSize;
  }

  maxSize(): number {
    return this.group.maxSize;
  }

  async targetSize(): Promise<number> {
    return (await this.live()).length;
  }

  private async live(): Promise<Instance[]> {
    return (await this.provider.client.instances(this.group.name)).filter((i) => i.state !== 'Terminated' && i.state !== 'ShuttingDown');
  }

  async increaseSize(delta: number): Promise<void> {
    if (delta <= 0) throw new Error(`size increase must be positive, got ${delta}`);
    await this.provider.client.createInstances(this.group.name, delta);
  }

  async deleteNodes(nodes: Node[]): Promise<void> {
    for (const n of nodes) {
      const parsed = parseProviderId(n.spec?.providerID);
      if (!parsed || parsed.group !== this.group.name) throw new Error(`node ${n.metadata.name} does not belong to node group ${this.group.name}`);
      await this.provider.client.deleteInstance(parsed.id);
    }
  }

  async decreaseTargetSize(delta: number): Promise<void> {
    // Instances here are created at once: there are no unfulfilled requests to cancel.
    if (delta >= 0) throw new Error(`size decrease must be negative, got ${delta}`);
  }

  async nodes(): Promise<CloudInstance[]> {
    return (await this.provider.client.instances(this.group.name))
      .filter((i) => i.state !== 'Terminated')
      .map((i) => ({ id: i.providerID, status: i.state === 'ShuttingDown' ? 'Deleting' : i.state === 'Pending' ? 'Creating' : 'Running' }));
  }

  async templateNode(): Promise<Node> {
    const t = this.provider.instanceType(this.group.instanceType);
    const capacity = { cpu: t?.cpu ?? '0', memory: t?.memory ?? '0', pods: String(t?.pods ?? 0) };
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: `template-${this.group.name}`,
        labels: { [INSTANCE_TYPE_LABEL]: this.group.instanceType, [ZONE_LABEL]: this.group.zones[0] ?? '', [REGION_LABEL]: 'local', 'kubernetes.io/os': 'linux' },
      },
      spec: {},
      status: { capacity, allocatable: capacity, conditions: [{ type: 'Ready', status: 'True' }] },
    } as Node;
  }
}
