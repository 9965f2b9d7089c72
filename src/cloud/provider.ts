// What the control plane needs from a cloud, shaped after cluster-autoscaler's CloudProvider and
// NodeGroup and the cloud-provider's InstancesV2, so other clouds plug in behind the same
// interface. `local` (./local-provider.ts) implements it on `skiff cloud serve`.
import type { Node } from '../api/kinds/node.js';

export type InstanceStatus = 'Creating' | 'Running' | 'Deleting';

/** An instance as the autoscaler sees it: its provider ID (the Node's spec.providerID) and state. */
export interface CloudInstance {
  id: string;
  status: InstanceStatus;
}

/** What the cloud node controller sets on a Node it initialises. */
export interface InstanceMetadata {
  providerID: string;
  instanceType: string;
  zone: string;
  region: string;
  addresses: { type: 'InternalIP' | 'ExternalIP' | 'Hostname'; address: string }[];
}

export interface NodeGroup {
  id(): string;
  minSize(): number;
  maxSize(): number;
  /** Instances asked for, registered or not. */
  targetSize(): Promise<number>;
  increaseSize(delta: number): Promise<void>;
  /** Deletes these nodes' instances (and lowers the target by as many). */
  deleteNodes(nodes: Node[]): Promise<void>;
  /** Lowers the target by cancelling requests not yet fulfilled: never deletes a running instance. */
  decreaseTargetSize(delta: number): Promise<void>;
  /** Every instance, those whose Node has not registered yet included. */
  nodes(): Promise<CloudInstance[]>;
  /** The Node a new instance of the group would register: what scale-up simulates pods on. */
  templateNode(): Promise<Node>;
}

export interface CloudProvider {
  name(): string;
  nodeGroups(): NodeGroup[];
  /** The group a Node's instance belongs to, or undefined (a Node no group manages). */
  nodeGroupForNode(node: Node): NodeGroup | undefined;
  /** Whether the cloud knows the Node's instance. */
  hasInstance(node: Node): Promise<boolean>;
  /** Called before every autoscaler loop: re-read what may have changed. */
  refresh(): Promise<void>;
  // InstancesV2, for the cloud node and node lifecycle controllers:
  instanceExists(node: Node): Promise<boolean>;
  instanceShutdown(node: Node): Promise<boolean>;
  instanceMetadata(node: Node): Promise<InstanceMetadata | undefined>;
  /** Load balancers for Services of type LoadBalancer (upstream's LoadBalancer interface); none when the cloud has none. */
  loadBalancers?(): LoadBalancers | undefined;
}

/** A Service's ports as a load balancer forwards them: to every node's address at the port's NodePort. */
export interface LoadBalancerRequest {
  /** Unique per Service and stable (upstream: "a" and the Service's UID without dashes). */
  name: string;
  ports: { port: number; protocol: string; nodePort: number }[];
  /** Addresses of the nodes it forwards to. */
  nodes: string[];
}

export interface LoadBalancers {
  /** Creates or updates it; answers the address it has. */
  ensure(req: LoadBalancerRequest): Promise<{ ip: string }>;
  /** Deletes it; one that does not exist is no error. */
  delete(name: string): Promise<void>;
}
