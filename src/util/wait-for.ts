// Poll until a condition holds, with a deadline: the one primitive for waiting on another process.

/** Polls check() every intervalMs until it holds; fails with `what` after timeoutMs. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
