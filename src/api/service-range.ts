// The Services' address ranges: kube-apiserver's --service-cluster-ip-range, where ClusterIPs are
// allocated, its first usable address kept for `default/kubernetes`; and --service-node-port-range,
// where NodePorts (and health check node ports) come from.
import { formatIp, parseCidr, parseIp, type Cidr } from './cidr.js';

export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.43.0.0/16';
export const DEFAULT_SERVICE_NODE_PORT_RANGE = '30000-32767';

/** A range of ports, both ends included. */
export interface PortRange {
  base: number;
  max: number;
}

/** A --service-node-port-range value ("30000-32767", or one port), or an Error worded as upstream's flag parser words it. */
export function parseNodePortRange(text: string): PortRange {
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(text);
  const base = m ? Number(m[1]) : NaN;
  const max = m ? Number(m[2] ?? m[1]) : NaN;
  if (!m || base > 65535 || max > 65535 || base < 1) throw new Error(`invalid argument "${text}" for "--service-node-port-range" flag: unable to parse port range: ${text}`);
  if (max < base) throw new Error(`invalid argument "${text}" for "--service-node-port-range" flag: end port is less than start port: ${text}`);
  return { base, max };
}

export class ServiceRange {
  private readonly width: number;
  /** Addresses in the block, network address included. */
  private readonly size: bigint;

  private constructor(
    readonly cidr: string,
    private readonly block: Cidr,
    /** Where NodePorts come from (--service-node-port-range). */
    readonly nodePorts: PortRange,
  ) {
    this.width = block.family === 4 ? 32 : 128;
    this.size = 1n << BigInt(this.width - block.prefix);
  }

  /** The range a flag names, or an Error with upstream's wording for one that cannot be used. */
  static parse(text: string, nodePortRange = DEFAULT_SERVICE_NODE_PORT_RANGE): ServiceRange {
    const block = parseCidr(text);
    if (!block) throw new Error(`--service-cluster-ip-range ${JSON.stringify(text)} is not a valid CIDR (e.g. 10.43.0.0/16 or fd00:10:43::/112)`);
    // Upstream refuses ranges its allocator's bitmap cannot hold: more than 2^20 addresses.
    const most = block.family === 4 ? 12 : 108;
    if (block.prefix < most) throw new Error(`specified --service-cluster-ip-range is too large; for ${block.family === 4 ? 32 : 128}-bit addresses, the mask must be >= ${most}`);
    if ((block.family === 4 ? 32 : 128) - block.prefix < 2) throw new Error(`specified --service-cluster-ip-range ${text} is too small: it leaves no address to allocate`);
    return new ServiceRange(`${formatIp(block.network, block.family)}/${block.prefix}`, block, parseNodePortRange(nodePortRange));
  }

  /** The address kept for `default/kubernetes`: the first usable one. */
  get kubernetesIp(): string {
    return this.at(1n);
  }

  /** A usable address (neither the network nor, for IPv4, the broadcast address). */
  contains(ip: string): boolean {
    const parsed = parseIp(ip);
    if (!parsed || parsed.family !== this.block.family) return false;
    const offset = parsed.bits - this.block.network;
    return offset > 0n && offset < this.size - (this.block.family === 4 ? 1n : 0n);
  }

  /** How many addresses can be handed out (the kubernetes one included). */
  get usable(): bigint {
    return this.size - (this.block.family === 4 ? 2n : 1n);
  }

  /** The address `offset` places into the block. */
  at(offset: bigint): string {
    return formatIp(this.block.network + offset, this.block.family);
  }
}
