// Pod state for a simulated node, in memory: a simulated container survives nothing, so there is
// nothing for a restarted fleet to adopt, and 100,000 pods cost no files.
import { join } from 'node:path';
import type { PodStateStore } from '../agent/state-dir.js';

export class MemoryPodState implements PodStateStore {
  private readonly pods = new Map<string, unknown>();

  constructor(private readonly dir: string) {}

  podDir(uid: string): string {
    return join(this.dir, 'pods', uid);
  }

  podUids(): string[] {
    return [...this.pods.keys()];
  }

  readPodState<T>(uid: string): T | undefined {
    return this.pods.get(uid) as T | undefined;
  }

  writePodState(uid: string, state: unknown): void {
    this.pods.set(uid, state);
  }

  removePod(uid: string): void {
    this.pods.delete(uid);
  }
}
