// Objects of the watch caches handed out without a copy (to read-only readers, to an update's
// first attempt) must never be changed in place. With SKIFF_FREEZE_SHARED=1 (the test suite sets
// it) they are frozen first, so a broken promise fails loudly instead of corrupting the cache.
const FREEZE_SHARED = process.env.SKIFF_FREEZE_SHARED === '1';

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}

/** A cache object handed out without a copy. */
export function shared<T>(v: T): T {
  return FREEZE_SHARED ? deepFreeze(v) : v;
}
