// `--control-plane-endpoint` given to a running `skiff up` cluster: the endpoint added, or moved.
// The `skiff up` that runs the cluster restarts each member in place, one at a time, with the new
// endpoint (its serving certificate is reissued with the new name or address next to the old
// ones), moves HAProxy there and rewrites the admin kubeconfig; agents, which fail over among the
// members themselves, keep running throughout. Where it stands: endpoint.json, logs/endpoint.log.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { askSupervisor, type RequestStatus } from './supervisor-request.js';

export interface EndpointMove extends RequestStatus {
  endpoint: string;
}

const RECORD = 'endpoint.json';

export function readEndpointMove(dir: string): EndpointMove | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, RECORD), 'utf8')) as EndpointMove;
    return typeof v.state === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export function writeEndpointMove(dir: string, move: EndpointMove): void {
  writeFileAtomic(join(dir, RECORD), `${JSON.stringify(move, null, 2)}\n`, 0o644);
}

export function endpointLogPath(dir: string): string {
  return join(dir, 'logs', 'endpoint.log');
}

/** A `say` that prints a line and appends it to the endpoint log, which a requester follows. */
export function endpointSay(dir: string, print: (line: string) => void): (line: string) => void {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  return (line) => {
    print(line);
    appendFileSync(endpointLogPath(dir), `${line}\n`);
  };
}

/** Asks the `skiff up` (pid) running the cluster to serve it at `endpoint`; the exit status. */
export function requestEndpointMove(dir: string, pid: number, endpoint: { host: string; port: number }, timeoutMs: number): Promise<number> {
  return askSupervisor(dir, pid, { kind: 'endpoint', endpoint }, {
    log: endpointLogPath(dir),
    status: () => readEndpointMove(dir),
    timeoutMs,
    what: `to serve it at the control-plane endpoint ${endpoint.host}:${endpoint.port}; every member restarts in place, one at a time`,
    ifGone: `skiff up --data-dir ${dir} with the same flags starts it again, with the endpoint it names`,
  });
}
