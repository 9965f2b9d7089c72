// A set of strings kept in order, for reading ranges (every key under a prefix) without sorting
// the whole set on each read. Inserts and removals move part of one array (a memmove of pointers:
// tens of microseconds at 100,000 keys), which is cheap beside the writes that cause them; reads
// find their range by binary search.
export class SortedKeys {
  private keys: string[] = [];

  /** Replaces the contents (any order). */
  reset(keys: Iterable<string>): void {
    this.keys = [...keys].sort();
  }

  get size(): number {
    return this.keys.length;
  }

  add(key: string): void {
    const i = this.lowerBound(key);
    if (this.keys[i] !== key) this.keys.splice(i, 0, key);
  }

  delete(key: string): void {
    const i = this.lowerBound(key);
    if (this.keys[i] === key) this.keys.splice(i, 1);
  }

  /** Every key starting with `prefix`, in order. */
  *withPrefix(prefix: string): IterableIterator<string> {
    for (let i = this.lowerBound(prefix); i < this.keys.length; i++) {
      const key = this.keys[i]!;
      if (!key.startsWith(prefix)) return;
      yield key;
    }
  }

  /** The first position whose key is not below `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
