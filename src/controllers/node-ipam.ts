// Node IPAM (kube-controller-manager's --allocate-node-cidrs with the range allocator): every Node
// gets a pod CIDR of its own from the cluster CIDR, in spec.podCIDR(s), once; the node's agent hands
// it to its container runtime, whose CNI plugin gives pods addresses from it. A CIDR is free again
// when its Node is gone — after a quarantine, because skiff's agents re-create a deleted Node with
// the CIDR its running pods still use.
import type { Node } from '../api/kinds/node.js';
import { isStatusError } from '../api/errors.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { PATHS } from '../controller-kit/informers.js';

/** How long a released CIDR stays out of reach of other nodes (its node's agent may bring the Node back). */
const RELEASE_QUARANTINE_MS = 5 * 60_000;

/** An IPv4 CIDR split into subnets of one size. */
export class SubnetRange {
  private readonly base: number;
  private readonly count: number;
  private readonly step: number;

  constructor(
    cidr: string,
    readonly maskSize: number,
  ) {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
    const octets = m ? m.slice(1, 5).map(Number) : [];
    const bits = m ? Number(m[5]) : -1;
    if (!m || octets.some((o) => o > 255) || bits > 32) throw new Error(`${cidr} is not an IPv4 CIDR (e.g. 10.42.0.0/16)`);
    if (maskSize < bits || maskSize > 30) throw new Error(`a node CIDR mask of /${maskSize} does not fit in ${cidr} (it must be between /${bits} and /30)`);
    const ip = octets.reduce((a, o) => a * 256 + o, 0);
    const size = 2 ** (32 - bits);
    this.base = ip - (ip % size);
    this.step = 2 ** (32 - maskSize);
    this.count = 2 ** (maskSize - bits);
  }

  get size(): number {
    return this.count;
  }

  subnet(i: number): string {
    const n = this.base + i * this.step;
    return `${[24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.')}/${this.maskSize}`;
  }
}

function cidrsOf(n: Node): string[] {
  return n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : []);
}

function hasCidr(n: Node): boolean {
  return cidrsOf(n).length > 0;
}

export interface NodeIpamOptions {
  clusterCIDR: string;
  nodeCidrMaskSize: number;
}

export class NodeIpamController implements Controller {
  readonly name = 'node-ipam-controller';

  constructor(private readonly o: NodeIpamOptions) {}

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const range = new SubnetRange(this.o.clusterCIDR, this.o.nodeCidrMaskSize);
    const nodes = ctx.informers.for<Node>(PATHS.nodes);
    const allocator = new AllocatePodCidr(ctx, range, nodes);
    const loop = new ReconcileLoop(allocator, { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    nodes.addHandlers({
      add: (n) => loop.enqueue(n.metadata.name!),
      update: (_o, n) => loop.enqueue(n.metadata.name!),
      delete: (n) => {
        allocator.released(n);
        // A range came free: nodes that found none get another look now, not at their next status write.
        for (const waiting of nodes.list()) if (!hasCidr(waiting)) loop.enqueue(waiting.metadata.name!);
      },
    });
    void nodes.waitForSync().then(() => loop.run(signal));
  }
}

class AllocatePodCidr implements Reconciler {
  readonly name = 'node-ipam-controller';
  /** CIDRs this controller gave out that its informer may not show yet. */
  private readonly given = new Map<string, string>();
  /** Released CIDRs and until when they stay reserved. */
  private readonly quarantined = new Map<string, number>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly range: SubnetRange,
    private readonly nodes: Informer<Node>,
  ) {}

  released(n: Node): void {
    for (const c of cidrsOf(n)) this.quarantined.set(c, this.ctx.clock.now() + RELEASE_QUARANTINE_MS);
    this.given.forEach((node, cidr) => node === n.metadata.name && this.given.delete(cidr));
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const node = this.nodes.get(name);
    if (!node || hasCidr(node) || node.metadata.deletionTimestamp) return;
    const now = this.ctx.clock.now();
    const used = new Set(this.nodes.list().flatMap(cidrsOf));
    for (const [c, until] of this.quarantined) if (until <= now) this.quarantined.delete(c);
    let cidr: string | undefined;
    // A quarantined CIDR is used only when nothing else is left.
    for (const pass of [0, 1]) {
      for (let i = 0; i < this.range.size && !cidr; i++) {
        const c = this.range.subnet(i);
        if (!used.has(c) && !this.given.has(c) && (pass === 1 || !this.quarantined.has(c))) cidr = c;
      }
      if (cidr) break;
    }
    if (!cidr) {
      this.ctx.recorder('cidrAllocator').event(node, 'Warning', 'CIDRNotAvailable', `Node ${name} status is now: CIDRNotAvailable`);
      return;
    }
    try {
      await this.ctx.client.patch(`/api/v1/nodes/${encodeURIComponent(name)}`, { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { podCIDR: cidr, podCIDRs: [cidr] } }, 'merge', { signal });
    } catch (e) {
      // Changed meanwhile (the informer brings the newer version) or gone: nothing given out.
      if (isStatusError(e, 'Conflict') || isStatusError(e, 'NotFound')) return;
      throw e;
    }
    this.given.set(cidr, name);
    this.quarantined.delete(cidr);
    this.ctx.log.info({ node: name, podCIDR: cidr }, 'pod CIDR allocated');
  }
}
