// An index over an informer by keys each object derives (a claim a volume points at, the claims a
// pod mounts): who refers to one key, without scanning every object on each event or reconcile.
// Built from the informer's own events, so it is current whenever a later-registered handler runs.
import type { KubeObject } from '../api/types.js';
import { objectKeyOf, type Informer } from '../client/informer.js';

export class KeyIndex<T extends KubeObject> {
  private readonly byKey = new Map<string, Set<string>>();
  private readonly keysOfObject = new Map<string, readonly string[]>();

  constructor(private readonly informer: Informer<T>, private readonly keysOf: (o: T) => readonly string[]) {
    informer.addHandlers({
      add: (o) => this.put(o),
      update: (_old, o) => this.put(o),
      delete: (o) => this.remove(objectKeyOf(o)),
    });
  }

  /** The objects that derive `key`. */
  get(key: string): T[] {
    const out: T[] = [];
    for (const k of this.byKey.get(key) ?? []) {
      const o = this.informer.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  private put(o: T): void {
    const objectKey = objectKeyOf(o);
    this.remove(objectKey);
    const keys = this.keysOf(o);
    if (keys.length === 0) return;
    this.keysOfObject.set(objectKey, keys);
    for (const key of keys) {
      let bucket = this.byKey.get(key);
      if (!bucket) this.byKey.set(key, (bucket = new Set()));
      bucket.add(objectKey);
    }
  }

  private remove(objectKey: string): void {
    for (const key of this.keysOfObject.get(objectKey) ?? []) {
      const bucket = this.byKey.get(key);
      bucket?.delete(objectKey);
      if (bucket?.size === 0) this.byKey.delete(key);
    }
    this.keysOfObject.delete(objectKey);
  }
}
