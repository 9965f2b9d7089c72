// Image garbage collection, as the kubelet's image manager does it: when the filesystem that holds
// the runtime's images is fuller than the high threshold (85 %), images no container uses — the
// least recently used first, none younger than the minimum age (2 min), never the sandbox image —
// are removed until it is down to the low threshold (80 %). One line per image removed, one when
// not enough could be.
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';

export interface GcImage {
  id: string;
  tags: string[];
  size: number;
}

/** What image GC needs of a runtime's image store. */
export interface ImageStore {
  /** The image filesystem's bytes in use and its capacity; undefined when unknown. */
  usage(): Promise<{ usedBytes: number; capacityBytes: number } | undefined>;
  images(): Promise<GcImage[]>;
  /** Image ids some container (running or not) was made from. */
  inUse(): Promise<Set<string>>;
  /** Never removed: the sandbox (pause) image, by tag. */
  pinned(): Promise<string[]>;
  remove(id: string): Promise<void>;
}

export interface ImageGcOptions extends ImageStore {
  clock: Clock;
  log: Logger;
  highThresholdPct?: number;
  lowThresholdPct?: number;
  minAgeMs?: number;
  periodMs?: number;
}

export class ImageGc {
  private readonly firstSeen = new Map<string, number>();
  private readonly lastUsed = new Map<string, number>();
  private short = false;

  constructor(private readonly o: ImageGcOptions) {}

  /** One look: records what is used; removes what it must. Answers the bytes freed. */
  async pass(): Promise<number> {
    const now = this.o.clock.now();
    const images = await this.o.images();
    const used = await this.o.inUse();
    for (const i of images) {
      if (!this.firstSeen.has(i.id)) this.firstSeen.set(i.id, now);
      if (used.has(i.id)) this.lastUsed.set(i.id, now);
    }
    for (const id of [...this.firstSeen.keys()]) if (!images.some((i) => i.id === id)) this.firstSeen.delete(id);
    const usage = await this.o.usage();
    if (!usage || usage.capacityBytes <= 0) return 0;
    const high = this.o.highThresholdPct ?? 85;
    const low = this.o.lowThresholdPct ?? 80;
    if ((usage.usedBytes / usage.capacityBytes) * 100 < high) {
      this.short = false;
      return 0;
    }
    const toFree = usage.usedBytes - (usage.capacityBytes * low) / 100;
    const pinned = new Set(await this.o.pinned());
    const minAge = this.o.minAgeMs ?? 2 * 60_000;
    const candidates = images
      .filter((i) => !used.has(i.id) && !i.tags.some((t) => pinned.has(t)) && now - (this.firstSeen.get(i.id) ?? now) >= minAge)
      .sort((a, b) => (this.lastUsed.get(a.id) ?? this.firstSeen.get(a.id) ?? 0) - (this.lastUsed.get(b.id) ?? this.firstSeen.get(b.id) ?? 0));
    let freed = 0;
    for (const i of candidates) {
      if (freed >= toFree) break;
      try {
        await this.o.remove(i.id);
        freed += i.size;
        this.firstSeen.delete(i.id);
        this.lastUsed.delete(i.id);
        this.o.log.info({ image: i.tags[0] ?? i.id, bytes: i.size }, 'unused image removed: the image filesystem is over its high threshold');
      } catch (e) {
        this.o.log.warn({ image: i.tags[0] ?? i.id, err: errorText(e) }, 'could not remove an unused image');
      }
    }
    if (freed < toFree && !this.short) this.o.log.warn({ wantedBytes: Math.ceil(toFree), freedBytes: freed }, 'image garbage collection could not free enough: every other image is in use or too new');
    this.short = freed < toFree;
    return freed;
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.o.clock.sleep(this.o.periodMs ?? 5 * 60_000, signal).catch(() => undefined);
      if (signal.aborted) return;
      await this.pass().catch((e: unknown) => this.o.log.debug({ err: errorText(e) }, 'image garbage collection pass failed'));
    }
  }
}
