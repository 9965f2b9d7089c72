// systemd's Restart=on-failure for the members `skiff up` supervises: a member that exits
// unexpectedly (a crash, a SIGKILL, the OOM killer) is started again in place, after a delay that
// doubles with each quick failure; one that exits cleanly, or with a refusal a restart cannot cure
// (RestartPreventExitStatus), is not, and neither is one that keeps failing (StartLimitBurst).
import { EXIT_CONFIG } from './exit-codes.js';

export type RestartSetting = 'on-failure' | 'no';

const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;
/** A run this long counts as healthy: the next failure starts the delays over. */
const HEALTHY_RUN_MS = 60_000;
/** At most this many restarts within LIMIT_INTERVAL_MS. */
const LIMIT_BURST = 5;
const LIMIT_INTERVAL_MS = 5 * 60_000;

export class RestartPolicy {
  private readonly history = new Map<string, { delayMs: number; restarts: number[] }>();

  constructor(
    private readonly setting: RestartSetting,
    private readonly now: () => number = Date.now,
  ) {}

  /** A restart asked for by name starts the count over. */
  forget(name: string): void {
    this.history.delete(name);
  }

  /**
   * The delay before starting `name` again after it exited so, having run `ranMs`; or why it is
   * not restarted.
   */
  next(name: string, exit: { code: number | null; signal: string | null }, ranMs: number): { delayMs: number } | { reason: string } {
    if (this.setting === 'no') return { reason: '--restart=no' };
    if (exit.code === 0 && exit.signal === null) return { reason: 'it exited cleanly' };
    if (exit.code === EXIT_CONFIG) return { reason: 'its refusal is not one a restart cures' };
    const now = this.now();
    const h = this.history.get(name) ?? { delayMs: 0, restarts: [] };
    h.restarts = h.restarts.filter((t) => now - t < LIMIT_INTERVAL_MS);
    if (h.restarts.length >= LIMIT_BURST) return { reason: `it was restarted ${LIMIT_BURST} times within ${LIMIT_INTERVAL_MS / 60_000} minutes` };
    h.delayMs = ranMs >= HEALTHY_RUN_MS || h.delayMs === 0 ? FIRST_DELAY_MS : Math.min(h.delayMs * 2, MAX_DELAY_MS);
    h.restarts.push(now);
    this.history.set(name, h);
    return { delayMs: h.delayMs };
  }
}
