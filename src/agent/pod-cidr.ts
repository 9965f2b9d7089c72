// The node's pod CIDR, given by the control plane in spec.podCIDR, handed to the container runtime
// (CRI UpdateRuntimeConfig, as the kubelet does): containerd makes its CNI configuration from it,
// and until then reports its network not ready. Handed over once per agent run and again when it
// changes; a failure is retried.
import type { Node } from '../api/kinds/node.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';

const RETRY_MS = 5_000;

export interface PodCidrHandoffOptions {
  clock: Clock;
  log: Logger;
  set(cidr: string): Promise<void>;
  signal: AbortSignal;
}

export class PodCidrHandoff {
  private handed?: string;
  private wanted?: string;
  private busy = false;

  constructor(private readonly o: PodCidrHandoffOptions) {}

  observe(node: Node): void {
    const cidr = node.spec?.podCIDR;
    if (!cidr) return;
    this.wanted = cidr;
    void this.hand();
  }

  private async hand(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.wanted && this.wanted !== this.handed && !this.o.signal.aborted) {
        const cidr = this.wanted;
        try {
          await this.o.set(cidr);
          this.handed = cidr;
          this.o.log.info({ podCIDR: cidr }, 'pod CIDR handed to the container runtime');
        } catch (e) {
          this.o.log.warn({ podCIDR: cidr, err: errorText(e) }, 'could not hand the pod CIDR to the container runtime; retrying');
          await this.o.clock.sleep(RETRY_MS, this.o.signal).catch(() => undefined);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}
