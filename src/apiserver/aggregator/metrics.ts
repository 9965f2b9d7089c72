// The aggregation layer's metrics under kube-aggregator's names, so the usual alert
// (aggregator_unavailable_apiservice > 0) works against skiff unchanged.
import { Counter, Gauge, type Registry } from 'prom-client';

export class AggregatorMetrics {
  private readonly unavailable: Gauge<'name'>;
  private readonly unavailableTotal: Counter<'name' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.unavailable = new Gauge({ name: 'aggregator_unavailable_apiservice', help: 'Gauge of APIServices which are marked as unavailable broken down by APIService name.', labelNames: ['name'], registers });
    this.unavailableTotal = new Counter({
      name: 'aggregator_unavailable_apiservice_total',
      help: 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
      labelNames: ['name', 'reason'],
      registers,
    });
  }

  /** The APIService's state now; `reason` is counted when it has just become unavailable. */
  observe(name: string, available: boolean, becameUnavailable?: string): void {
    this.unavailable.set({ name }, available ? 0 : 1);
    if (becameUnavailable !== undefined) this.unavailableTotal.inc({ name, reason: becameUnavailable || 'UnknownReason' });
  }

  /** A deleted APIService leaves the gauge. */
  forget(name: string): void {
    this.unavailable.remove({ name });
  }
}
