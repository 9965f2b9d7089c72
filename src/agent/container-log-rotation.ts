// Container logs kept within bounds, as the kubelet's container log manager keeps them
// (containerLogMaxSize 10Mi, containerLogMaxFiles 5, checked every containerLogMonitorInterval,
// 10 s): a container that prints without end must not fill the node's disk. A container writes its
// log file itself, through a descriptor opened for appending, and may outlive the agent; so the
// file is rotated by copy and truncate — the copy becomes `<log>.1` (older ones move up, the
// oldest beyond the limit goes), and the container's next write lands at the start of the
// emptied file. Lines written between the copy and the truncation are lost, as with logrotate's
// copytruncate. `kubectl logs` reads the current file, as upstream's reads the newest.
import { existsSync, readdirSync, renameSync, rmSync, statSync, truncateSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { AgentStateDir } from './state-dir.js';

export interface ContainerLogRotationOptions {
  state: Pick<AgentStateDir, 'podDir' | 'podUids'>;
  clock: Clock;
  log: Logger;
  /** A log over this many bytes is rotated (upstream: 10Mi). */
  maxBytes: number;
  /** Files kept per container, the current one included (upstream: 5; at least 2). */
  maxFiles: number;
  /** How often logs are checked (upstream: 10 s). */
  intervalMs: number;
}

export class ContainerLogRotation {
  private timer?: Timer;
  private stopped = false;

  constructor(private readonly o: ContainerLogRotationOptions) {}

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      await this.rotateOnce();
      if (!this.stopped) this.timer = this.o.clock.setTimeout(() => void tick(), this.o.intervalMs);
    };
    this.timer = this.o.clock.setTimeout(() => void tick(), this.o.intervalMs);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /**
   * One pass over every pod's containers: the newest log of each, rotated if over the limit.
   * Returns how many were. Copies run off the event loop (a noisy container's log may be large),
   * one pass at a time.
   */
  async rotateOnce(): Promise<number> {
    let rotated = 0;
    for (const uid of this.o.state.podUids()) {
      const logs = join(this.o.state.podDir(uid), 'logs');
      let containers: string[];
      try {
        containers = readdirSync(logs);
      } catch {
        continue; // no logs yet, or the pod was removed meanwhile
      }
      for (const container of containers) {
        try {
          const current = newestLog(join(logs, container));
          if (current && (statSync(current, { throwIfNoEntry: false })?.size ?? 0) > this.o.maxBytes) {
            await this.rotate(current);
            rotated++;
          }
        } catch (e) {
          // A pod removed while it was looked at; the next pass sees the tree as it is.
          this.o.log.debug({ err: String(e), uid, container }, 'container log not rotated');
        }
      }
    }
    return rotated;
  }

  private async rotate(path: string): Promise<void> {
    const keep = Math.max(2, this.o.maxFiles) - 1;
    try {
      rmSync(`${path}.${keep}`, { force: true });
      for (let i = keep - 1; i >= 1; i--) if (existsSync(`${path}.${i}`)) renameSync(`${path}.${i}`, `${path}.${i + 1}`);
      await copyFile(path, `${path}.1`);
    } finally {
      // Even when the copy failed (a full disk): the file the container writes must not grow on.
      truncateSync(path, 0);
    }
  }
}

/** The log of a container's latest instance (`<n>.log`, highest n): earlier ones no longer grow. */
function newestLog(dir: string): string | undefined {
  let best = -1;
  for (const name of readdirSync(dir)) {
    const m = /^(\d+)\.log$/.exec(name);
    if (m && Number(m[1]) > best) best = Number(m[1]);
  }
  return best < 0 ? undefined : join(dir, `${best}.log`);
}
