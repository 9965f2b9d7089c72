// Random strings for generated names. A crypto call per name costs more than the rest of a create
// in a busy API server, so bytes come from a pool refilled a few thousand at a time.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let next = POOL_BYTES;

function randomByte(): number {
  if (next === POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** `length` characters drawn uniformly from `alphabet` (at most 256 characters). */
export function randomString(alphabet: string, length: number): string {
  // Bytes at or above the largest multiple of the alphabet's size are redrawn, so that no
  // character is likelier than another.
  const limit = 256 - (256 % alphabet.length);
  let s = '';
  while (s.length < length) {
    const b = randomByte();
    if (b < limit) s += alphabet[b % alphabet.length];
  }
  return s;
}

/** Upstream's generated-name suffix (generateName, kube-api-access volumes): five characters without vowels or look-alikes. */
export function generatedNameSuffix(): string {
  return randomString('bcdfghjklmnpqrstvwxz2456789', 5);
}
