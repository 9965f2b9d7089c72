// The local cloud's load balancers: each gets an address from a loopback range (127.0.100.0/24 by
// default, so nothing outside this machine is ever a target) and forwards every TCP connection to
// one of its targets (the nodes' addresses, each with the Service port's NodePort), in turn, as a
// cloud's network load balancer does; a target that refuses or cannot be reached is skipped for
// the next. A TCP forwarder in the cloud's own process rather than iptables on the address: it
// works the same wherever the nodes run (this host, network namespaces), needs no rules on the
// host and goes with the cloud process.
import net from 'node:net';
import { formatIp, parseCidr } from '../api/cidr.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';

export const DEFAULT_LOAD_BALANCER_RANGE = '127.0.100.0/24';

export interface LoadBalancerPort {
  port: number;
  protocol: string;
  nodePort: number;
}

/** What the cloud keeps of a load balancer. */
export interface LoadBalancerSpec {
  name: string;
  ports: LoadBalancerPort[];
  /** The nodes' addresses, the targets of every port. */
  nodes: string[];
}

export interface LoadBalancer extends LoadBalancerSpec {
  ip: string;
}

/** Addresses of a range, the network and broadcast ones left out. */
export function rangeAddresses(cidr: string): string[] {
  const block = parseCidr(cidr);
  if (!block || block.family !== 4) throw new Error(`load balancer range ${JSON.stringify(cidr)} is not an IPv4 CIDR`);
  const size = 1n << BigInt(32 - block.prefix);
  const out: string[] = [];
  for (let i = 1n; i < size - 1n && out.length < 65536; i++) out.push(formatIp(block.network + i, 4));
  return out;
}

/** The listeners of the cloud's load balancers, kept in step with what the cloud stores. */
export class LoadBalancerForwarders {
  private readonly listeners = new Map<string, { server: net.Server; targets: () => { host: string; port: number }[] }>();
  private readonly next = new Map<string, number>();

  constructor(private readonly log: Logger) {}

  /** Listens for every TCP port of `lb` (and stops listening on ports it no longer has). */
  async apply(lb: LoadBalancer): Promise<void> {
    const wanted = new Set<string>();
    for (const p of lb.ports) {
      if (p.protocol !== 'TCP') continue;
      const key = `${lb.name}|${lb.ip}:${p.port}`;
      wanted.add(key);
      const targets = () => lb.nodes.map((host) => ({ host, port: p.nodePort }));
      const have = this.listeners.get(key);
      if (have) {
        have.targets = targets;
        continue;
      }
      const entry = { server: net.createServer((c) => this.forward(key, c, entry.targets())), targets };
      await new Promise<void>((resolve, reject) => {
        entry.server.once('error', reject);
        entry.server.listen(p.port, lb.ip, () => resolve());
      });
      this.listeners.set(key, entry);
      this.log.info({ loadBalancer: lb.name, address: `${lb.ip}:${p.port}` }, 'load balancer listening');
    }
    for (const key of [...this.listeners.keys()]) if (key.startsWith(`${lb.name}|`) && !wanted.has(key)) await this.closeKey(key);
  }

  async remove(name: string): Promise<void> {
    for (const key of [...this.listeners.keys()]) if (key.startsWith(`${name}|`)) await this.closeKey(key);
  }

  async close(): Promise<void> {
    for (const key of [...this.listeners.keys()]) await this.closeKey(key);
  }

  private async closeKey(key: string): Promise<void> {
    const l = this.listeners.get(key);
    this.listeners.delete(key);
    this.next.delete(key);
    await new Promise<void>((r) => l?.server.close(() => r()) ?? r());
    this.log.info({ address: key.split('|')[1] }, 'load balancer no longer listening');
  }

  /** Round robin over the targets, skipping one that cannot be connected to. */
  private forward(key: string, client: net.Socket, targets: { host: string; port: number }[]): void {
    client.pause();
    client.on('error', () => undefined);
    const start = this.next.get(key) ?? 0;
    this.next.set(key, start + 1);
    const attempt = (n: number): void => {
      if (n >= targets.length) {
        client.destroy();
        return;
      }
      const t = targets[(start + n) % targets.length]!;
      const upstream = net.connect({ host: t.host, port: t.port, timeout: 3000 });
      const fail = (e?: Error) => {
        upstream.destroy();
        if (e && n === targets.length - 1) this.log.debug({ target: `${t.host}:${t.port}`, err: errorText(e) }, 'no load balancer target answered');
        attempt(n + 1);
      };
      upstream.once('error', fail);
      upstream.once('timeout', () => fail(new Error('connect timeout')));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error').removeAllListeners('timeout');
        upstream.setTimeout(0);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    attempt(0);
  }
}
