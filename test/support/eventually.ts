// The one bounded poll every test and benchmark waits with: no bare sleeps, a deadline, and the
// last value or error in the failure message.

/** Polls fn until it returns a truthy value; fails after timeoutMs with the last value or error. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  what = 'condition',
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Polls fn for the whole of windowMs and fails as soon as it is false: what must not happen, for a while. */
export async function throughout(fn: () => Promise<boolean> | boolean, windowMs: number, what = 'condition', intervalMs = 200): Promise<void> {
  const deadline = Date.now() + windowMs;
  while (Date.now() < deadline) {
    if (!(await fn())) throw new Error(`${what} stopped holding before ${windowMs} ms were up`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
