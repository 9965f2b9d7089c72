// The agent as kube-proxy (iptables mode) for nodes whose pods have addresses of their own: it
// watches Services and EndpointSlices and keeps the node's nat and filter rules so that a Service's
// cluster IP and port, and its NodePort on any of the node's addresses, reach its ready endpoints,
// from pods, from the node itself and from outside; a Service without one refuses at once. Rules
// are rewritten in full, atomically (iptables-restore), at most every `minSyncMs`, and removed when
// the agent leaves gracefully.
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { EndpointSlice } from '../../api/kinds/endpointslice.js';
import type { Service } from '../../api/kinds/service.js';
import type { Informer } from '../../client/informer.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { serviceRules, proxyChains, type DnsRedirect, type ProxyChains } from './iptables-rules.js';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface ServiceProxyOptions {
  nodeName: string;
  clock: Clock;
  log: Logger;
  services: Informer<Service>;
  slices: Informer<EndpointSlice>;
  /** Changes arriving closer together than this are applied together (kube-proxy's --iptables-min-sync-period, 1 s). */
  minSyncMs?: number;
  /** Where the cluster DNS address is sent: this node's DNS server (../cluster-dns.ts). */
  dnsRedirect?: () => DnsRedirect | undefined;
}

/** The jumps from the built-in chains into this node's chains. */
function jumps(c: ProxyChains, nodeName: string): { table: 'nat' | 'filter'; chain: string; args: string[] }[] {
  const comment = ['-m', 'comment', '--comment', `skiff service proxy of ${nodeName}`];
  const fresh = ['-m', 'conntrack', '--ctstate', 'NEW'];
  return [
    { table: 'nat', chain: 'PREROUTING', args: [...comment, '-j', c.services] },
    { table: 'nat', chain: 'OUTPUT', args: [...comment, '-j', c.services] },
    { table: 'nat', chain: 'POSTROUTING', args: [...comment, '-j', c.postrouting] },
    { table: 'filter', chain: 'INPUT', args: [...fresh, ...comment, '-j', c.filter] },
    { table: 'filter', chain: 'FORWARD', args: [...fresh, ...comment, '-j', c.filter] },
    { table: 'filter', chain: 'OUTPUT', args: [...fresh, ...comment, '-j', c.filter] },
  ];
}

function iptables(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile('iptables', ['-w', '5', ...args], (err, _o, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve())));
}

function restore(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('iptables-restore', ['-w', '5', '--noflush'], (err, _o, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve()));
    child.stdin?.end(text);
  });
}

/** Whether this machine can keep service rules (iptables present and usable by us). */
export function serviceProxySupported(): boolean {
  try {
    execFileSync('iptables', ['-w', '5', '-t', 'nat', '-S', 'OUTPUT'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export class ServiceProxy {
  private readonly chains: ProxyChains;
  private current = new Set<string>();
  private timer?: Timer;
  private syncing?: Promise<void>;
  private again = false;
  private lastText = '';
  private failing = false;
  private stopped = false;

  constructor(private readonly o: ServiceProxyOptions) {
    this.chains = proxyChains(o.nodeName);
  }

  /** Installs the jumps, removes what an earlier run of this node left, and syncs on every change. */
  async start(): Promise<void> {
    this.current = await existingChains(this.chains.prefix);
    // A NodePort answers on 127.0.0.1 too, as kube-proxy's: packets DNATed away from loopback must be routable.
    try {
      writeFileSync('/proc/sys/net/ipv4/conf/all/route_localnet', '1');
    } catch {
      /* not ours to set: NodePorts still answer on the node's other addresses */
    }
    for (const j of jumps(this.chains, this.o.nodeName)) {
      // The chain must exist before a rule can jump to it.
      await iptables(['-t', j.table, '-N', j.args[j.args.length - 1]!]).catch(() => undefined);
      const present = await iptables(['-t', j.table, '-C', j.chain, ...j.args]).then(() => true, () => false);
      if (!present) await iptables(['-t', j.table, '-I', j.chain, '1', ...j.args]);
    }
    const changed = () => this.schedule();
    for (const inf of [this.o.services, this.o.slices] as Informer<Service | EndpointSlice>[]) inf.addHandlers({ add: changed, update: changed, delete: changed });
    this.schedule();
  }

  /** Rewrites the rules soon: something they are made from besides Services and slices changed. */
  kick(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      void this.sync();
    }, this.o.minSyncMs ?? 1000);
  }

  /** Rewrites the rules from the informers' view now. */
  async sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      const byService = new Map<string, EndpointSlice[]>();
      for (const s of this.o.slices.list()) {
        const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
        if (!svc) continue;
        const key = `${s.metadata.namespace}/${svc}`;
        const list = byService.get(key);
        if (list) list.push(s);
        else byService.set(key, [s]);
      }
      const { text, chains } = serviceRules(this.chains, this.o.nodeName, this.o.services.list(), (svc) => byService.get(`${svc.metadata.namespace}/${svc.metadata.name}`) ?? [], this.current, this.o.dnsRedirect?.());
      if (text === this.lastText) return;
      try {
        await restore(text);
        this.current = chains;
        this.lastText = text;
        if (this.failing) this.o.log.info({}, 'service rules applied again');
        this.failing = false;
      } catch (e) {
        if (!this.failing) this.o.log.warn({ err: errorText(e) }, 'could not apply the service rules; retrying on the next change');
        this.failing = true;
        this.schedule();
      }
    })().finally(() => {
      this.syncing = undefined;
      if (this.again) {
        this.again = false;
        this.schedule();
      }
    });
    return this.syncing;
  }

  /** Removes this node's rules and chains (the agent leaves). */
  async remove(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.syncing;
    await removeServiceRules(this.o.nodeName).catch((e: unknown) => this.o.log.warn({ err: errorText(e) }, 'could not remove the service rules'));
  }
}

/** Removes the Service rules and chains a node's agent keeps (also those an agent killed outright left). */
export async function removeServiceRules(nodeName: string): Promise<void> {
  const chains = proxyChains(nodeName);
  for (const j of jumps(chains, nodeName)) await iptables(['-t', j.table, '-D', j.chain, ...j.args]).catch(() => undefined);
  for (const table of ['nat', 'filter'] as const) {
    const all = await existingChains(chains.prefix, table);
    if (all.size === 0) continue;
    await restore([`*${table}`, ...[...all].map((c) => `:${c} - [0:0]`), ...[...all].map((c) => `-X ${c}`), 'COMMIT', ''].join('\n'));
  }
}

async function existingChains(prefix: string, table: 'nat' | 'filter' = 'nat'): Promise<Set<string>> {
  const out = new Set<string>();
  const text = await new Promise<string>((resolve) => execFile('iptables-save', ['-t', table], (err, stdout) => resolve(err ? '' : stdout)));
  for (const line of text.split('\n')) if (line.startsWith(`:${prefix}`)) out.add(line.slice(1).split(' ')[0]!);
  return out;
}
