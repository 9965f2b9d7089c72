// The agent's data directory: everything an agent must remember across restarts, each piece in
// its own small file written atomically (temp file + rename), so a crash at any moment leaves
// either the old or the new version, never half of one.
//
//   machine-id            stable per-machine identity (skiff.dev/machine-id)
//   credential/           node.key, node.crt, ca.crt: the node credential from joining
//   servers.json          the API server list the agent fails over among
//   node.json             the operator-owned part of the Node as last observed (labels, annotations,
//                         taints, unschedulable), restored when the Node is re-created
//   retired               present after `skiff node retire`: the agent stays out until --rejoin
//   tls/                  the log server's self-signed serving certificate
//   pods/<uid>/           per-pod runtime state (state.json) and container logs
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Taint } from '../api/kinds/node.js';

/** The part of a Node that operators own and the agent restores when it re-creates the Node. */
export interface ObservedNode {
  nodeName: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: Taint[];
  unschedulable: boolean;
  /** The pod CIDR the control plane gave the node: its running pods hold addresses from it. */
  podCIDRs?: string[];
  observedAt: string;
}

export interface NodeCredential {
  keyPem: string;
  certPem: string;
  caPem: string;
}


/** Where pod sync keeps what it must remember per pod: the agent's data dir, or memory for a simulated fleet. */
export type PodStateStore = Pick<AgentStateDir, 'podDir' | 'podUids' | 'readPodState' | 'writePodState' | 'removePod'>;

/** Where the node keeper keeps the operator-owned part of its Node. */
export type ObservedNodeStore = Pick<AgentStateDir, 'readObservedNode' | 'writeObservedNode'>;

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export class AgentStateDir {
  readonly root: string;

  constructor(dir: string) {
    this.root = resolve(dir);
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  /** The machine id, created on first use: 32 hex characters, like /etc/machine-id. */
  machineId(): string {
    const file = this.path('machine-id');
    if (existsSync(file)) {
      const id = readFileSync(file, 'utf8').trim();
      if (/^[0-9a-f]{32}$/.test(id)) return id;
    }
    const id = randomBytes(16).toString('hex');
    writeFileAtomic(file, `${id}\n`, 0o644);
    return id;
  }

  // --- node credential -----------------------------------------------------------------------

  readCredential(): NodeCredential | undefined {
    const dir = this.path('credential');
    const files = ['node.key', 'node.crt', 'ca.crt'].map((f) => join(dir, f));
    if (!files.every((f) => existsSync(f))) return undefined;
    const [keyPem, certPem, caPem] = files.map((f) => readFileSync(f, 'utf8')) as [string, string, string];
    return { keyPem, certPem, caPem };
  }

  writeCredential(c: NodeCredential): void {
    const dir = this.path('credential');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(join(dir, 'node.key'), c.keyPem);
    writeFileAtomic(join(dir, 'node.crt'), c.certPem, 0o644);
    writeFileAtomic(join(dir, 'ca.crt'), c.caPem, 0o644);
  }

  // --- server list ---------------------------------------------------------------------------

  readServers(): string[] {
    const v = readJson<{ servers?: unknown }>(this.path('servers.json'));
    return Array.isArray(v?.servers) ? v.servers.filter((s): s is string => typeof s === 'string') : [];
  }

  writeServers(servers: readonly string[]): void {
    if (servers.length === 0) return;
    const current = this.readServers();
    if (current.length === servers.length && current.every((s, i) => s === servers[i])) return;
    writeFileAtomic(this.path('servers.json'), JSON.stringify({ servers }, null, 2) + '\n', 0o644);
  }

  // --- last observed Node --------------------------------------------------------------------

  readObservedNode(nodeName: string): ObservedNode | undefined {
    const v = readJson<ObservedNode>(this.path('node.json'));
    if (!v || v.nodeName !== nodeName || typeof v.labels !== 'object') return undefined;
    return { ...v, labels: v.labels ?? {}, annotations: v.annotations ?? {}, taints: Array.isArray(v.taints) ? v.taints : [], unschedulable: v.unschedulable === true };
  }

  writeObservedNode(o: ObservedNode): void {
    writeFileAtomic(this.path('node.json'), JSON.stringify(o, null, 2) + '\n', 0o644);
  }

  /** Drops what belongs to the cluster the agent was in (before it joins another): members, credential, its Node. */
  forgetCluster(): void {
    for (const f of ['servers.json', 'node.json', 'credential']) rmSync(this.path(f), { recursive: true, force: true });
  }

  // --- retirement ----------------------------------------------------------------------------

  retiredAt(): string | undefined {
    const file = this.path('retired');
    return existsSync(file) ? readFileSync(file, 'utf8').trim() || 'unknown time' : undefined;
  }

  markRetired(at: string): void {
    writeFileAtomic(this.path('retired'), `${at}\n`, 0o644);
  }

  clearRetired(): void {
    rmSync(this.path('retired'), { force: true });
  }

  // --- pods ----------------------------------------------------------------------------------

  podDir(uid: string): string {
    return this.path('pods', uid);
  }

  podUids(): string[] {
    const dir = this.path('pods');
    if (!existsSync(dir)) return [];
    return readdirSync(dir).filter((n) => /^[A-Za-z0-9-]+$/.test(n));
  }

  readPodState<T>(uid: string): T | undefined {
    return readJson<T>(join(this.podDir(uid), 'state.json'));
  }

  writePodState(uid: string, state: unknown): void {
    const dir = this.podDir(uid);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(join(dir, 'state.json'), JSON.stringify(state) + '\n', 0o600);
  }

  removePod(uid: string): void {
    rmSync(this.podDir(uid), { recursive: true, force: true });
  }
}
