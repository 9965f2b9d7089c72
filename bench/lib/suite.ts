// What every benchmark suite looks like to bench/run.ts.
import type { Table } from './util.js';

export interface SuiteContext {
  quick: boolean;
  /** Measuring time per cell. */
  durationMs: number;
  /** Directory for CPU profiles of the server, when --cpu-prof was given. */
  cpuProfDir?: string;
}

export interface SuiteResult {
  tables: Table[];
  /** Every figure, as written to bench-results.json. */
  data: Record<string, unknown>;
}

export interface Suite {
  name: string;
  description: string;
  run(ctx: SuiteContext): Promise<SuiteResult>;
}
