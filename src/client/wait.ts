// Waiting for a freshly started server to answer.
import { existsSync } from 'node:fs';
import { ApiClient } from './rest.js';

/**
 * Polls until the kubeconfig exists and /readyz answers ok; throws after timeoutMs. `server` asks
 * that address instead of the kubeconfig's (a member whose kubeconfig names a shared endpoint).
 */
export async function waitForReady(kubeconfig: string, timeoutMs: number, progress?: (msg: string) => void, server?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  let lastError = 'kubeconfig not written yet';
  while (Date.now() < deadline) {
    if (existsSync(kubeconfig)) {
      const client = ApiClient.fromKubeconfig(kubeconfig, { timeoutMs: 2000, ...(server ? { servers: [server] } : {}) });
      try {
        const text = await client.get<string>('/readyz');
        if (String(text).trim() === 'ok') return;
        lastError = String(text);
      } catch (e) {
        lastError = (e as Error).message;
      } finally {
        client.close();
      }
    }
    if (!said && progress && Date.now() > deadline - timeoutMs + 3000) {
      progress('waiting for the API server to become ready...');
      said = true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`API server not ready after ${timeoutMs} ms: ${lastError}`);
}
