// One real containerd node for the suites that time pods in real containers: its own containerd
// (a bridge of its own, the busybox image imported), a `skiff server` and one `skiff agent` on the
// containerd runtime, Ready; and everything taken down again, mounts and bridge included.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../../test/support/eventually.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { importImage } from '../../src/cri/image-import.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Node } from '../../src/api/kinds/node.js';
import { startSkiffServer, type SkiffServer } from './servers.js';
import type { SuiteResult } from './suite.js';
import { percentile, progress, skiffEntry, startChild, type ManagedChild } from './util.js';

export function run(cmd: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => execFile(cmd, args, (err, _o, stderr) => resolve({ code: err ? 1 : 0, stderr })));
}

/** The result of a suite that cannot run here (no containerd, runc, CNI plugins or root), or undefined. */
export function containerdSkipped(suite: string): SuiteResult | undefined {
  const missing = containerdPrerequisites();
  if (missing.length === 0) return undefined;
  progress(`${suite}: skipped, needs ${missing.join(', ')}`);
  return { tables: [{ title: `${suite}: skipped`, headers: ['needs'], rows: missing.map((m) => [m]) }], data: { skipped: missing } };
}

export interface ContainerdNodeOptions {
  /** The suite's scratch directory. */
  work: string;
  /** The CNI bridge, at most 15 characters, distinct per suite. */
  bridge: string;
  image: string;
  token: string;
  nodeName: string;
  /** `skiff server` flags beside the token (the pod and service ranges). */
  serverArgs: string[];
}

export class ContainerdBenchNode {
  readonly containerd: ContainerdDaemon;
  server?: SkiffServer;
  agent?: ManagedChild;

  constructor(private readonly o: ContainerdNodeOptions) {
    this.containerd = new ContainerdDaemon({ dir: join(o.work, 'containerd'), bridge: o.bridge, network: o.bridge });
  }

  /** containerd with the busybox image; a leftover bridge of an earlier run is removed first. */
  async startContainerd(): Promise<string> {
    await run('ip', ['link', 'del', this.o.bridge]);
    await this.containerd.start();
    const archive = join(this.o.work, 'busybox.tar');
    writeBusyboxImage(this.o.image, archive, { Cmd: ['sh'] });
    importImage(archive, this.containerd.endpoint);
    return archive;
  }

  /** The server and the node's agent, once the Node is Ready; a client of the server. */
  async startNode(): Promise<ApiClient> {
    const server = await startSkiffServer({ serverArgs: ['--token', this.o.token, ...this.o.serverArgs] });
    this.server = server;
    const client = server.client(30_000);
    const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
    this.agent = startChild(
      'skiff agent',
      process.execPath,
      [skiffEntry(), 'agent', '--server', serverUrl, '--token', this.o.token, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--data-dir', join(this.o.work, 'agent'), '--node-name', this.o.nodeName, '--kubelet-port', '0', '--runtime', 'containerd', '--container-runtime-endpoint', this.containerd.endpoint],
      join(this.o.work, 'agent.log'),
    );
    await eventually(async () => (await client.get<Node>(`/api/v1/nodes/${this.o.nodeName}`)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 60_000, 'agent Ready', 100);
    return client;
  }

  /** Agent, server, the node's sandboxes, containerd, their mounts and the bridge. */
  async stop(): Promise<void> {
    await this.agent?.stop(60_000);
    await this.server?.stop();
    await this.containerd.removeSandboxes().catch(() => undefined);
    await this.containerd.stop();
    await run('sh', ['-c', `grep ' ${this.o.work}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
    await run('ip', ['link', 'del', this.o.bridge]);
  }
}

/** p50, p99 and max of a sample, in its unit. */
export function latencyStats(ms: readonly number[]): { p50: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? 0 };
}
