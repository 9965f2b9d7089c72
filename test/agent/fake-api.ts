// An in-memory stand-in for the API, with the five methods the agent's loops use, plus switches to
// make it unreachable and a log of calls. Enough semantics for nodes, leases, events and pods:
// create (AlreadyExists), get (NotFound), replace (Conflict on a stale resourceVersion), merge
// patch (incl. /status), delete (uid preconditions).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { StatusError } from '../../src/api/errors.js';
import type { KubeObject } from '../../src/api/types.js';
import type { AgentApi } from '../../src/agent/api.js';
import type { Logger } from '../../src/util/log.js';

export interface Call {
  method: string;
  path: string;
  body?: unknown;
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export class FakeApi implements AgentApi {
  readonly objects = new Map<string, KubeObject>();
  readonly calls: Call[] = [];
  down = false;
  private rv = 1;

  private fail(path: string): void {
    if (this.down) throw new Error(`cannot reach https://fake: connect ECONNREFUSED (${path})`);
  }

  private notFound(path: string): StatusError {
    const name = path.split('/').pop()!;
    return new StatusError(404, 'NotFound', `"${name}" not found`);
  }

  private stamp(o: KubeObject): KubeObject {
    o.metadata.resourceVersion = String(++this.rv);
    return o;
  }

  put(path: string, o: KubeObject): KubeObject {
    const c = structuredClone(o);
    c.metadata.uid ??= randomUUID();
    this.objects.set(path, this.stamp(c));
    return structuredClone(c);
  }

  async get<T = KubeObject>(path: string): Promise<T> {
    this.calls.push({ method: 'GET', path });
    this.fail(path);
    const o = this.objects.get(path);
    if (!o) throw this.notFound(path);
    return structuredClone(o) as T;
  }

  async create<T = KubeObject>(path: string, body: unknown): Promise<T> {
    this.calls.push({ method: 'POST', path, body });
    this.fail(path);
    const o = structuredClone(body) as KubeObject;
    const name = o.metadata.name ?? randomUUID();
    const full = `${path}/${name}`;
    if (this.objects.has(full)) throw new StatusError(409, 'AlreadyExists', `"${name}" already exists`);
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = new Date().toISOString();
    return this.put(full, o) as T;
  }

  async replace<T = KubeObject>(path: string, body: unknown): Promise<T> {
    this.calls.push({ method: 'PUT', path, body });
    this.fail(path);
    const cur = this.objects.get(path);
    if (!cur) throw this.notFound(path);
    const o = structuredClone(body) as KubeObject;
    if (o.metadata.resourceVersion && o.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw new StatusError(409, 'Conflict', 'the object has been modified');
    }
    o.metadata.uid = cur.metadata.uid;
    return this.put(path, o) as T;
  }

  async patch<T = KubeObject>(path: string, body: unknown): Promise<T> {
    this.calls.push({ method: 'PATCH', path, body });
    this.fail(path);
    const objPath = path.endsWith('/status') ? path.slice(0, -'/status'.length) : path;
    const cur = this.objects.get(objPath);
    if (!cur) throw this.notFound(objPath);
    const next = mergePatch(cur, body) as KubeObject;
    next.metadata.uid = cur.metadata.uid;
    return this.put(objPath, next) as T;
  }

  async delete<T = unknown>(path: string, body?: unknown): Promise<T> {
    this.calls.push({ method: 'DELETE', path, body });
    this.fail(path);
    const cur = this.objects.get(path);
    if (!cur) throw this.notFound(path);
    const uid = (body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
    if (uid && uid !== cur.metadata.uid) throw new StatusError(409, 'Conflict', 'uid precondition failed');
    this.objects.delete(path);
    return {} as T;
  }

  count(method: string, pathPrefix: string): number {
    return this.calls.filter((c) => c.method === method && c.path.startsWith(pathPrefix)).length;
  }
}

/** A pino logger whose lines land in `lines` (parsed). */
export function captureLogger(): { log: Logger; lines: { level: number; msg: string; [k: string]: unknown }[] } {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as { level: number; msg: string });
      cb();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

export function tempDir(prefix = 'skiff-agent-unit-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Lets pino's stream and pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
