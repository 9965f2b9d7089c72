// The floor server's process (bench/lib/floor-server.ts starts it): HTTPS, one Store create per POST.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { openEtcdStore } from '../../src/store/etcd.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import type { FloorConfig } from './floor-server.js';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function serve(config: FloorConfig): Promise<void> {
  const store: Store =
    config.store.kind === 'sqlite'
      ? await openSqliteStore({ path: config.store.path })
      : await openEtcdStore({ endpoints: config.store.endpoints, compactIntervalMs: 0 });
  const tls = (f: string) => readFileSync(join(config.tlsDir, f));
  const server = createServer({ key: tls('server.key'), cert: tls('server.crt'), ca: tls('ca.crt'), requestCert: true }, (req, res) => {
    readBody(req)
      .then(async (text) => {
        const obj = JSON.parse(text) as { metadata?: { name?: string; generateName?: string } };
        const name = obj.metadata?.name ?? `${obj.metadata?.generateName ?? 'x'}${Math.random().toString(36).slice(2)}`;
        const body = JSON.stringify(obj);
        await store.create(`/floor${req.url ?? '/'}/${name}`, body);
        reply(res, 201, body);
      })
      .catch((e: unknown) => reply(res, 500, JSON.stringify({ message: e instanceof Error ? e.message : String(e) })));
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.send?.({ port: typeof addr === 'object' && addr ? addr.port : 0 });
  });
  const exit = () => {
    server.close();
    server.closeAllConnections();
    void store.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', exit);
  // The bench went away without stopping us (killed, or exited on a signal): go too.
  process.once('disconnect', exit);
}

const raw = process.env.SKIFF_FLOOR_CONFIG;
const config = raw ? (JSON.parse(raw) as FloorConfig) : undefined;
if (config?.kind === 'skiff-floor-server') {
  serve(config).catch((e: unknown) => {
    // Exit once the message is out, so the bench reads the reason rather than "exited early".
    const exit = () => process.exit(1);
    if (process.send) process.send({ error: e instanceof Error ? e.message : String(e) }, exit);
    else exit();
  });
}
