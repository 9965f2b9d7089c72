// Suite `volumes`: what a claim adds to a pod's start. One containerd node; pods go through the
// scheduler, one at a time, alternately with and without a claim of the default class
// (local-path, WaitForFirstConsumer), each timed from the first create call (the claim's, for a
// pod with one) to the first watch event that shows the pod Running. A claim adds the scheduler's
// pre-bind (the node selected on the claim), the controller handing it to the provisioner, the
// agent's directory and PersistentVolume, the binding, and the bind mount. The peer is the same
// pod without a claim, measured in the same run.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { eventually } from '../../test/support/eventually.js';
import { ContainerdDaemon, containerdPrerequisites } from '../../src/cri/containerd-daemon.js';
import { writeBusyboxImage } from '../../src/cri/oci-archive.js';
import { importImage } from '../../src/cri/image-import.js';
import { Informer } from '../../src/client/informer.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { startSkiffServer, type SkiffServer } from '../lib/servers.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { makeTempDir, percentile, progress, removeTempDir, round, skiffEntry, startChild, type ManagedChild, type Table } from '../lib/util.js';

const TOKEN = 'bench0.volumes000000000';
const NODE = 'bench-vol';
const IMAGE = 'skiff.local/busybox:1.36';
const BRIDGE = 'skvol1';

function run(cmd: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => execFile(cmd, args, (err, _o, stderr) => resolve({ code: err ? 1 : 0, stderr })));
}

function stats(ms: number[]): { p50: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? 0 };
}

export const volumesSuite: Suite = {
  name: 'volumes',
  description: 'pod create → Running through the scheduler on one containerd node, with a local-path claim beside without',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const missing = containerdPrerequisites();
    if (missing.length > 0) {
      progress(`volumes: skipped, needs ${missing.join(', ')}`);
      return { tables: [{ title: 'volumes: skipped', headers: ['needs'], rows: missing.map((m) => [m]) }], data: { skipped: missing } };
    }
    const each = ctx.quick ? 10 : 30;
    const work = makeTempDir('skiff-bench-vol-');
    const containerd = new ContainerdDaemon({ dir: join(work, 'containerd'), bridge: BRIDGE, network: BRIDGE });
    let server: SkiffServer | undefined;
    let agent: ManagedChild | undefined;
    await run('ip', ['link', 'del', BRIDGE]);
    try {
      await containerd.start();
      const archive = join(work, 'busybox.tar');
      writeBusyboxImage(IMAGE, archive, { Cmd: ['sh'] });
      importImage(archive, containerd.endpoint);
      server = await startSkiffServer({ serverArgs: ['--token', TOKEN, '--allocate-node-cidrs', 'true', '--cluster-cidr', '10.62.0.0/16', '--service-cluster-ip-range', '10.162.0.0/16'] });
      const client = server.client(30_000);
      const serverUrl = parseKubeconfig(readFileSync(server.kubeconfig, 'utf8'), () => '').server;
      agent = startChild(
        'skiff agent',
        process.execPath,
        [skiffEntry(), 'agent', '--server', serverUrl, '--token', TOKEN, '--ca-file', join(server.dataDir, 'tls', 'ca.crt'), '--data-dir', join(work, 'agent'), '--node-name', NODE, '--kubelet-port', '0', '--runtime', 'containerd', '--container-runtime-endpoint', containerd.endpoint],
        join(work, 'agent.log'),
      );
      await eventually(async () => (await client.get<Node>(`/api/v1/nodes/${NODE}`)).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 60_000, 'agent Ready', 100);

      const running = new Map<string, number>();
      const informer = new Informer<Pod>(client, { path: '/api/v1/namespaces/default/pods', clock: systemClock, log: silentLogger() });
      const seen = (p: Pod) => {
        if (p.status?.phase === 'Running' && !running.has(p.metadata.name!)) running.set(p.metadata.name!, performance.now());
      };
      informer.addHandlers({ add: seen, update: (_o, p) => seen(p) });
      const stop = new AbortController();
      void informer.run(stop.signal);
      await informer.waitForSync();

      const startOne = async (name: string, withClaim: boolean): Promise<number> => {
        const t = performance.now();
        if (withClaim) {
          await client.create('/api/v1/namespaces/default/persistentvolumeclaims', {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
          });
        }
        await client.create('/api/v1/namespaces/default/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: {
            terminationGracePeriodSeconds: 1,
            automountServiceAccountToken: false,
            containers: [{ name: 'c', image: IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'], ...(withClaim ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}) }],
            ...(withClaim ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: name } }] } : {}),
          },
        });
        await eventually(() => running.has(name), 60_000, `${name} Running`, 20);
        return running.get(name)! - t;
      };
      const withClaim: number[] = [];
      const without: number[] = [];
      progress(`volumes: ${each} pods with a claim and ${each} without, one at a time, alternately`);
      for (let i = 0; i < each; i++) {
        without.push(await startOne(`plain-${i}`, false));
        withClaim.push(await startOne(`claim-${i}`, true));
      }
      stop.abort();
      progress('volumes: deleting the pods and claims');
      await client.delete('/api/v1/namespaces/default/pods').catch(() => undefined);
      await client.delete('/api/v1/namespaces/default/persistentvolumeclaims').catch(() => undefined);
      await eventually(async () => (await client.get<{ items: unknown[] }>('/api/v1/persistentvolumes')).items.length === 0, 120_000, 'volumes reclaimed', 200).catch(() => undefined);
      client.close();
      const a = stats(withClaim);
      const b = stats(without);
      const table: Table = {
        title: `volumes: pod create → Running through the scheduler, one containerd node, ${each} pods each, alternately`,
        headers: ['', 'p50', 'p99', 'max'],
        rows: [
          ['skiff: with a local-path claim (claim created first, provisioned on the pod\'s node)', `${round(a.p50, 0)} ms`, `${round(a.p99, 0)} ms`, `${round(a.max, 0)} ms`],
          ['peer: the same pod without a claim', `${round(b.p50, 0)} ms`, `${round(b.p99, 0)} ms`, `${round(b.max, 0)} ms`],
        ],
        notes: ['a claim adds: the node selected on the claim, the claim handed to the provisioner, the agent\'s directory and PersistentVolume, the binding, then the pod\'s binding and a bind mount'],
      };
      return { tables: [table], data: { each, withClaimMs: a, withoutMs: b } };
    } finally {
      await agent?.stop(60_000);
      await server?.stop();
      await containerd.removeSandboxes().catch(() => undefined);
      await containerd.stop();
      await run('sh', ['-c', `grep ' ${work}' /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l`]);
      await run('ip', ['link', 'del', BRIDGE]);
      removeTempDir(work);
    }
  },
};
