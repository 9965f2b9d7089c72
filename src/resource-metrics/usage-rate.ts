// CPU usage is read as a cumulative counter (core-nanoseconds since the container started); the
// rate a user sees is the counter's growth between two samples over the time between them, as
// metrics-server computes it from two scrapes of the kubelet's /metrics/resource.

/** One reading of a cumulative CPU counter and the memory beside it. */
export interface UsageSample {
  /** When it was read (ms since the epoch). */
  timestampMs: number;
  /** CPU time used so far, in core-nanoseconds. */
  cpuCoreNanoSeconds: number;
  memoryWorkingSetBytes: number;
}

/** A rate: nanocores over the window (ms) it was measured across, ending at `timestampMs`. */
export interface UsageRate {
  timestampMs: number;
  windowMs: number;
  nanoCores: number;
  memoryWorkingSetBytes: number;
}

/**
 * The rate between two samples; undefined when it cannot be told: no time between them, or a
 * counter that went back (the container restarted, its counter starting again).
 */
export function usageRate(prev: UsageSample, last: UsageSample): UsageRate | undefined {
  const windowMs = last.timestampMs - prev.timestampMs;
  const used = last.cpuCoreNanoSeconds - prev.cpuCoreNanoSeconds;
  if (windowMs <= 0 || used < 0) return undefined;
  return { timestampMs: last.timestampMs, windowMs, nanoCores: (used * 1000) / windowMs, memoryWorkingSetBytes: last.memoryWorkingSetBytes };
}

/** The last two samples of one counter: a new one pushes the oldest out. */
export class SamplePair {
  prev?: UsageSample;
  last?: UsageSample;

  push(s: UsageSample): void {
    // The same reading again (a scrape between two of the runtime's own updates) measures nothing.
    if (this.last && this.last.timestampMs === s.timestampMs) return;
    this.prev = this.last;
    this.last = s;
  }

  /**
   * The current rate. Without an earlier sample, a container that started after `sinceMs` (the
   * previous scrape) is measured from its start with a counter of zero there, as metrics-server
   * measures new pods, so they have figures one scrape earlier.
   */
  rate(startedAtMs?: number, sinceMs?: number): UsageRate | undefined {
    if (!this.last) return undefined;
    if (this.prev) {
      const r = usageRate(this.prev, this.last);
      if (r) return r;
    }
    if (startedAtMs !== undefined && sinceMs !== undefined && startedAtMs > sinceMs) {
      return usageRate({ timestampMs: startedAtMs, cpuCoreNanoSeconds: 0, memoryWorkingSetBytes: 0 }, this.last);
    }
    return undefined;
  }
}
