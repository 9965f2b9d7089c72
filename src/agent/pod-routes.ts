// One pod network across machines, as flannel's host-gw backend makes it: this node routes every
// other node's pod CIDR (spec.podCIDR) to that node's InternalIP, so a pod reaches a pod on another
// machine by its address, and a Service's endpoint wherever it runs. The routes follow a watch of
// the Nodes: a new or changed Node's route is replaced, a deleted Node's removed. Nodes that share
// this machine's loopback (several agents on one host) need none: their bridges are all local.
// Like host-gw, it needs the nodes on one link (each node's address reachable without a router).
import { execFile } from 'node:child_process';
import type { Node } from '../api/kinds/node.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';

export interface PodRoute {
  cidr: string;
  via: string;
}

/** Runs `ip` with these arguments; injectable for tests. */
export type IpCommand = (args: string[]) => Promise<void>;

export const runIp: IpCommand = (args) =>
  new Promise((resolve, reject) => execFile('ip', args, (err, _o, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve())));

function internalIp(node: Node): string | undefined {
  return node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
}

/** The route to another node's pods, or none (no pod CIDR or address yet, this node, or a node on loopback). */
export function podRouteOf(node: Node, self: string): PodRoute | undefined {
  const cidr = node.spec?.podCIDR;
  const via = internalIp(node);
  if (node.metadata.name === self || !cidr || !via || via.startsWith('127.') || via.includes(':')) return undefined;
  return { cidr, via };
}

export class PodRoutes {
  /** What is installed, by node name. */
  private readonly installed = new Map<string, PodRoute>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: { nodeName: string; log: Logger; ip?: IpCommand },
  ) {}

  private get ip(): IpCommand {
    return this.o.ip ?? runIp;
  }

  /** A Node added or changed: its route replaced when it differs from what is installed. */
  observe(node: Node): Promise<void> {
    return this.serial(async () => {
      const name = node.metadata.name!;
      const want = podRouteOf(node, this.o.nodeName);
      const have = this.installed.get(name);
      if (want && have && want.cidr === have.cidr && want.via === have.via) return;
      if (have && (!want || want.cidr !== have.cidr)) await this.remove(name, have);
      if (!want) return;
      try {
        await this.ip(['route', 'replace', want.cidr, 'via', want.via]);
        this.installed.set(name, want);
        this.o.log.info({ node: name, podCIDR: want.cidr, via: want.via }, 'routing a node\'s pods');
      } catch (e) {
        this.o.log.warn({ node: name, podCIDR: want.cidr, via: want.via, err: errorText(e) }, 'could not route a node\'s pods');
      }
    });
  }

  /** A Node deleted for good: its pods' route goes. */
  deleted(node: Node): Promise<void> {
    return this.serial(async () => {
      const name = node.metadata.name!;
      const have = this.installed.get(name);
      if (have) await this.remove(name, have);
    });
  }

  routes(): Map<string, PodRoute> {
    return new Map(this.installed);
  }

  private async remove(name: string, r: PodRoute): Promise<void> {
    this.installed.delete(name);
    try {
      await this.ip(['route', 'del', r.cidr, 'via', r.via]);
      this.o.log.info({ node: name, podCIDR: r.cidr, via: r.via }, 'no longer routing a node\'s pods');
    } catch (e) {
      this.o.log.warn({ node: name, podCIDR: r.cidr, err: errorText(e) }, 'could not remove the route to a node\'s pods');
    }
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    this.chain = this.chain.then(fn, fn);
    return this.chain;
  }
}
