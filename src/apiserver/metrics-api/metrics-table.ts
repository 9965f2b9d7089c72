// How metrics-server prints NodeMetrics and PodMetrics for `kubectl get`: a Table of the name, one
// column per resource (cpu, memory; a pod's as its containers' sums) and the window.
import type { KubeObject } from '../../api/types.js';
import { tableRowObject, type IncludeObject } from '../http/negotiate.js';
import { cpuQuantity, memoryQuantity } from '../../resource-metrics/quantities.js';
import type { UsageRate } from '../../resource-metrics/usage-rate.js';

/** One object of the answer and the figures its row shows. */
export interface MetricsRow {
  object: KubeObject;
  /** The node's rate, or each container's. */
  rates: readonly UsageRate[];
  window: string;
}

const COLUMNS = [
  { name: 'Name', type: 'string', format: 'name', description: 'Name of the resource', priority: 0 },
  { name: 'cpu', type: 'string', format: 'quantity', description: '', priority: 0 },
  { name: 'memory', type: 'string', format: 'quantity', description: '', priority: 0 },
  { name: 'Window', type: 'string', format: 'duration', description: '', priority: 0 },
];

export function metricsTable(rows: readonly MetricsRow[], include: IncludeObject | undefined): KubeObject {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {},
    columnDefinitions: COLUMNS,
    rows: rows.map((r) => {
      const cpu = r.rates.reduce((a, x) => a + Math.round(x.nanoCores), 0);
      const memory = r.rates.reduce((a, x) => a + x.memoryWorkingSetBytes, 0);
      const object = tableRowObject(r.object, include);
      return { cells: [r.object.metadata.name, cpuQuantity(cpu), memoryQuantity(memory), r.window], ...(object ? { object } : {}) };
    }),
  } as unknown as KubeObject;
}
