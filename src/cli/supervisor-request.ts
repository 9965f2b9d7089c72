// Asking the `skiff up` that runs a cluster to change it while it runs (move its store to etcd,
// move its control-plane endpoint): it owns the processes, so it does the work. The request goes
// in a file of the cluster directory and SUPERVISOR_REQUEST_SIGNAL tells the supervisor; its
// progress lines go to a log that the asking command shows as they come, and a status file says
// when it is done (or why it failed).
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../util/proc.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';

/** What tells a running `skiff up` that a request waits for it. */
export const SUPERVISOR_REQUEST_SIGNAL = 'SIGUSR2';

export type SupervisorRequest = { kind: 'convert'; servers: number } | { kind: 'endpoint'; endpoint: { host: string; port: number } };

export interface RequestStatus {
  state: 'converting' | 'moving' | 'done' | 'failed';
  startedAt: string;
  reason?: string;
}

const REQUEST = 'request.json';

/** The pending request, taken (a second signal finds none). */
export function takeSupervisorRequest(dir: string): SupervisorRequest | undefined {
  try {
    const v = JSON.parse(readFileSync(join(dir, REQUEST), 'utf8')) as SupervisorRequest;
    rmSync(join(dir, REQUEST), { force: true });
    return v.kind === 'convert' || v.kind === 'endpoint' ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface AskOptions {
  /** The supervisor's progress log, shown from where it stands now. */
  log: string;
  /** Where the request stands, as the supervisor records it. */
  status: () => RequestStatus | undefined;
  timeoutMs: number;
  /** What was asked, for the first line ("to convert it to etcd ..."). */
  what: string;
  /** What to do when the supervisor goes away before it is done. */
  ifGone: string;
}

/** Asks the `skiff up` (pid) running the cluster in `dir`, and shows its progress; the exit status. */
export async function askSupervisor(dir: string, pid: number, request: SupervisorRequest, o: AskOptions): Promise<number> {
  mkdirSync(join(dir, 'logs'), { recursive: true });
  closeSync(openSync(o.log, 'a'));
  let offset = fileSize(o.log);
  const askedAt = new Date().toISOString();
  writeFileAtomic(join(dir, REQUEST), `${JSON.stringify(request)}\n`, 0o644);
  console.log(`asking the skiff up that runs the cluster (pid ${pid}) ${o.what}`);
  process.kill(pid, SUPERVISOR_REQUEST_SIGNAL);
  const show = () => {
    const fd = openSync(o.log, 'r');
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (let n; (n = readSync(fd, buf, 0, buf.length, offset)) > 0; offset += n) process.stdout.write(buf.subarray(0, n));
    } finally {
      closeSync(fd);
    }
  };
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    show();
    const st = o.status();
    if (st && st.startedAt >= askedAt && st.state !== 'converting' && st.state !== 'moving') {
      show();
      if (st.state === 'done') return 0;
      console.error(`skiff up: ${st.reason ?? 'it failed; see the output of skiff up'}`);
      return 1;
    }
    if (!processAlive(pid)) {
      show();
      console.error(`skiff up: the skiff up that ran the cluster (pid ${pid}) exited before it was done; ${o.ifGone}`);
      return 1;
    }
    if (Date.now() > deadline) {
      console.error(`skiff up: not done within ${Math.round(o.timeoutMs / 1000)} s; it goes on in skiff up (pid ${pid}), whose output shows it`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function fileSize(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}
