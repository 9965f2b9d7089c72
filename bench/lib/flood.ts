// A flood of API calls from several ordinary (non-admin) users: each runs many concurrent loops of
// cluster-wide pod lists, ConfigMap create+delete pairs in its own namespace, and short watches,
// as a misbehaving tool or a crowd of CI jobs would. Refusals are counted, and a refused loop
// pauses briefly (it does not honour Retry-After: a flood is not polite). Bounded in time; every
// request goes to the given loopback server only.
import https from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface FloodUser {
  name: string;
  token: string;
  /** Where its creates and watches go (it must exist, and the user may write there). */
  namespace: string;
}

export interface FloodOptions {
  server: string;
  caPem: string;
  users: FloodUser[];
  /** Concurrent loops per user, by kind. */
  loops: { list: number; create: number; watch: number };
  durationMs: number;
  /** What the list loops read (default: every pod, at most 500 a page). */
  listPath?: string;
}

export interface FloodOutcome {
  requests: number;
  /** Answers by HTTP code; 0: no answer (connection error or timeout). */
  byCode: Record<number, number>;
}

const PAUSE_AFTER_REFUSAL_MS = 50;
const REQUEST_TIMEOUT_MS = 30_000;

function send(agent: https.Agent, server: string, token: string, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(`${server}${path}`, { method, agent, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) } }, (res: IncomingMessage) => {
      // Read and dropped: the flood costs the server, not this process.
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

export async function flood(opts: FloodOptions): Promise<FloodOutcome> {
  const outcome: FloodOutcome = { requests: 0, byCode: {} };
  const deadline = Date.now() + opts.durationMs;
  const count = (code: number): void => {
    outcome.requests++;
    outcome.byCode[code] = (outcome.byCode[code] ?? 0) + 1;
  };
  const pause = (code: number): Promise<void> | undefined => (code === 429 || code === 0 ? new Promise((r) => setTimeout(r, PAUSE_AFTER_REFUSAL_MS)) : undefined);
  const loops: Promise<void>[] = [];
  const agents: https.Agent[] = [];
  for (const user of opts.users) {
    const agent = new https.Agent({ keepAlive: true, maxSockets: Infinity, ca: opts.caPem });
    agents.push(agent);
    const call = async (method: string, path: string, body?: string): Promise<number> => {
      const code = await send(agent, opts.server, user.token, method, path, body);
      count(code);
      await pause(code);
      return code;
    };
    const configmaps = `/api/v1/namespaces/${user.namespace}/configmaps`;
    for (let i = 0; i < opts.loops.list; i++) {
      loops.push((async () => {
        while (Date.now() < deadline) await call('GET', opts.listPath ?? '/api/v1/pods?limit=500');
      })());
    }
    for (let i = 0; i < opts.loops.create; i++) {
      loops.push((async () => {
        for (let n = 0; Date.now() < deadline; n++) {
          const name = `flood-${i}-${n}`;
          const code = await call('POST', configmaps, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: String(n) } }));
          if (code === 201) await call('DELETE', `${configmaps}/${name}`);
        }
      })());
    }
    for (let i = 0; i < opts.loops.watch; i++) {
      loops.push((async () => {
        while (Date.now() < deadline) await call('GET', `${configmaps}?watch=true&timeoutSeconds=2`);
      })());
    }
  }
  await Promise.all(loops);
  for (const a of agents) a.destroy();
  return outcome;
}
