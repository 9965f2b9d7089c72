// A real API server inside the test process (SQLite in a temp dir, HTTPS on a free loopback
// port): for testing controllers and clients against real semantics without spawning processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiServer, type ApiServerOptions } from '../../src/apiserver/server.js';
import { ApiClient } from '../../src/client/rest.js';
import { ensureClusterPki } from '../../src/pki/cluster-pki.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { silentLogger } from '../../src/util/log.js';

export interface InProcessServer {
  api: ApiServer;
  store: Store;
  url: string;
  /** The admin's TLS material, for tests that speak HTTP by hand. */
  adminTls: { ca: string; cert: string; key: string };
  /** An admin client (system:masters). */
  client(): ApiClient;
  stop(): Promise<void>;
}

export async function startInProcessServer(extra: Partial<ApiServerOptions> = {}): Promise<InProcessServer> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-inproc-'));
  const store = await openSqliteStore({ path: join(dir, 'state.db'), maintenanceIntervalMs: 0 });
  const pki = await ensureClusterPki(dir, ['127.0.0.1', 'localhost']);
  const api = new ApiServer({
    store,
    log: silentLogger(),
    host: '127.0.0.1',
    port: 0,
    tls: { certPem: pki.server.certPem, keyPem: pki.server.keyPem, caPem: pki.ca.certPem },
    ca: pki.ca,
    ...extra,
  });
  const port = await api.start();
  const url = `https://127.0.0.1:${port}`;
  const clients: ApiClient[] = [];
  return {
    api,
    store,
    url,
    adminTls: { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem },
    client() {
      const c = new ApiClient({ servers: [url], caPem: pki.ca.certPem, clientCertPem: pki.admin.certPem, clientKeyPem: pki.admin.keyPem, timeoutMs: 10_000 });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      await api.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
