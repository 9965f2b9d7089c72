// A containerd that skiff starts itself (`skiff up --runtime containerd`, and the tests): its own
// root, state and socket under a data dir, its CRI plugin configured for one node — the pause image
// skiff builds, and a CNI bridge network on the node's pod CIDR. One containerd per node, as on a
// real machine: the CRI plugin serves a single namespace and a single pod network, so nodes that
// shared one would see each other's sandboxes and hand out addresses from one range.
import { execFile } from 'node:child_process';
import { startProcess, type ManagedProcess } from '../util/processes.js';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CriClient } from './client.js';
import { findBinary } from '../util/find-binary.js';
import { errorText } from '../util/error-text.js';
import { haveStaticBusybox, writeBusyboxImage } from './oci-archive.js';
import { importImage } from './image-import.js';

/** The sandbox (pause) image skiff's containerd is configured with; made locally, never pulled. */
export const PAUSE_IMAGE = 'skiff.local/pause:3.10';

export interface ContainerdDaemonOptions {
  /** Everything of this containerd lives here: config, root, state, socket, CNI state, log. */
  dir: string;
  /**
   * The node's pod CIDR (e.g. 10.244.1.0/24): the bridge's range. Without one, containerd makes its
   * CNI configuration from a template once the node's agent hands it the CIDR the control plane
   * allocated (until then it reports its network not ready).
   */
  podCIDR?: string;
  /** The bridge's name, at most 15 characters; distinct per node on one machine. */
  bridge: string;
  /** The CNI network's name, distinct per node (host-local keeps its leases by it). */
  network: string;
  /** Registries (host:port) spoken to over plain HTTP, as a local registry without TLS is. */
  plainHttpRegistries?: string[];
  /** A network namespace (`ip netns add NAME`) it runs in, as on a machine of its own: its pods' bridge and routes are there. */
  netns?: string;
}

export function containerdBinary(): string | undefined {
  return findBinary('containerd', 'SKIFF_CONTAINERD_BIN', ['/usr/bin/containerd']);
}

/** Where the Debian package puts the CNI plugins (containernetworking-plugins), or the usual /opt path. */
export function cniBinDir(): string | undefined {
  for (const d of ['/usr/lib/cni', '/opt/cni/bin']) if (existsSync(join(d, 'bridge')) && existsSync(join(d, 'host-local'))) return d;
  return undefined;
}

/** What is missing on this machine for skiff to run containers with containerd; empty when nothing is. */
export function containerdPrerequisites(): string[] {
  const missing: string[] = [];
  if (!containerdBinary()) missing.push('containerd (Debian: containerd)');
  if (!findBinary('runc', 'SKIFF_RUNC_BIN', ['/usr/sbin/runc', '/usr/bin/runc'])) missing.push('runc (Debian: runc)');
  if (!findBinary('ctr', 'SKIFF_CTR_BIN', ['/usr/bin/ctr'])) missing.push('ctr (Debian: containerd)');
  if (!cniBinDir()) missing.push('CNI plugins (Debian: containernetworking-plugins)');
  // The bridge plugin masquerades pod traffic, and the agent routes Service cluster IPs, with iptables.
  if (!findBinary('iptables-restore', 'SKIFF_IPTABLES_RESTORE_BIN', ['/usr/sbin/iptables-restore', '/sbin/iptables-restore'])) missing.push('iptables (Debian: iptables)');
  if (!haveStaticBusybox()) missing.push('a static busybox for the pause image (Debian: busybox-static)');
  if (process.getuid?.() !== 0) missing.push('root (containers need namespaces, cgroups and mounts)');
  return missing;
}

export class ContainerdDaemon {
  readonly socket: string;
  readonly endpoint: string;
  private proc?: ManagedProcess;

  /** The CRI endpoint of the containerd whose data is in `dir` (what `skiff image load` finds). */
  static endpointIn(dir: string): string {
    return `unix://${join(dir, 'containerd.sock')}`;
  }

  constructor(readonly o: ContainerdDaemonOptions) {
    this.socket = join(o.dir, 'containerd.sock');
    this.endpoint = ContainerdDaemon.endpointIn(o.dir);
  }

  get pid(): number | undefined {
    return this.proc?.child.pid;
  }

  private get running(): boolean {
    const c = this.proc?.child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  /** Writes containerd's config and the CNI network; answers the config's path. */
  writeConfig(): string {
    const cniConf = join(this.o.dir, 'cni', 'net.d');
    mkdirSync(cniConf, { recursive: true });
    const binDir = cniBinDir() ?? '/opt/cni/bin';
    // A placeholder where the template goes: containerd fills in the node's ranges.
    const RANGES = '"@RANGES@"';
    const net = {
      cniVersion: '1.0.0',
      name: this.o.network,
      plugins: [
        {
          type: 'bridge',
          bridge: this.o.bridge,
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: { type: 'host-local', dataDir: join(this.o.dir, 'cni', 'ipam'), ranges: this.o.podCIDR ? [[{ subnet: this.o.podCIDR }]] : '@RANGES@', routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    };
    const template = join(this.o.dir, 'cni', 'net.template');
    const conflist = join(cniConf, '10-skiff.conflist');
    rmSync(conflist, { force: true });
    rmSync(template, { force: true });
    if (this.o.podCIDR) writeFileSync(conflist, JSON.stringify(net, null, 2));
    else writeFileSync(template, JSON.stringify(net, null, 2).replace(RANGES, '[{{range $i, $r := .PodCIDRRanges}}{{if $i}},{{end}}[{"subnet":"{{$r}}"}]{{end}}]'));
    const config = [
      'version = 2',
      `root = ${JSON.stringify(join(this.o.dir, 'root'))}`,
      `state = ${JSON.stringify(join(this.o.dir, 'state'))}`,
      '[grpc]',
      `  address = ${JSON.stringify(this.socket)}`,
      '[ttrpc]',
      `  address = ${JSON.stringify(`${this.socket}.ttrpc`)}`,
      '[plugins."io.containerd.grpc.v1.cri"]',
      // A sandbox asks for oom_score_adj -998, which needs CAP_SYS_RESOURCE; inside a container
      // (CI, a dev box) that is often missing and every sandbox would fail. Restricted, it gets no
      // lower a score than containerd's own — the same protection wherever containerd has it.
      '  restrict_oom_score_adj = true',
      `  sandbox_image = ${JSON.stringify(PAUSE_IMAGE)}`,
      // The streaming server (exec, attach, port-forward) listens on loopback only.
      '  stream_server_address = "127.0.0.1"',
      '  stream_server_port = "0"',
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      `    bin_dir = ${JSON.stringify(binDir)}`,
      `    conf_dir = ${JSON.stringify(cniConf)}`,
      ...(this.o.podCIDR ? [] : [`    conf_template = ${JSON.stringify(template)}`]),
      ...(this.o.plainHttpRegistries ?? []).flatMap((r) => [`  [plugins."io.containerd.grpc.v1.cri".registry.mirrors.${JSON.stringify(r)}]`, `    endpoint = [${JSON.stringify(`http://${r}`)}]`]),
      '',
    ].join('\n');
    const path = join(this.o.dir, 'config.toml');
    writeFileSync(path, config);
    return path;
  }

  /** Starts containerd and waits until its CRI plugin answers; makes the pause image if missing. */
  async start(timeoutMs = 30_000): Promise<void> {
    const bin = containerdBinary();
    if (!bin) throw new Error('containerd is not installed (Debian: containerd)');
    mkdirSync(this.o.dir, { recursive: true });
    const config = this.writeConfig();
    // Packet forwarding between pod bridges and the host: pods of different nodes reach each other.
    if (this.o.netns) await new Promise<void>((r) => execFile('ip', ['netns', 'exec', this.o.netns!, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'], () => r()));
    else {
      try {
        writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
      } catch {
        /* not ours to set (a container without CAP_NET_ADMIN): pods still reach their own node */
      }
    }
    const logFile = join(this.o.dir, 'containerd.log');
    // Its own process group, which shims leave (they set their own): stopping it leaves containers running.
    // nsenter, not `ip netns exec`: that one mounts a sysfs of its own, which hides the cgroup file system runc needs.
    const command = this.o.netns ? { command: 'nsenter', args: [`--net=/run/netns/${this.o.netns}`, bin, '--config', config] } : { command: bin, args: ['--config', config] };
    const proc = startProcess({ name: 'containerd', ...command, output: logFile });
    this.proc = proc;
    const exited = proc.exited.then(({ code, signal }) => {
      throw new Error(`containerd exited (code ${code}, signal ${signal}); see ${logFile}`);
    });
    exited.catch(() => undefined);
    const cri = new CriClient({ endpoint: this.endpoint, timeoutMs: 2000 });
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          await Promise.race([cri.version(), exited]);
          break;
        } catch (e) {
          if (!this.running || Date.now() > deadline) throw new Error(`containerd did not answer on ${this.socket}: ${errorText(e)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (!(await cri.imageStatus(PAUSE_IMAGE))) this.importPauseImage();
    } finally {
      cri.close();
    }
  }

  private importPauseImage(): void {
    const archive = join(this.o.dir, 'pause.tar');
    // PID 1 of a pod: it holds the namespaces and does nothing; SIGKILL ends it when the pod stops.
    writeBusyboxImage(PAUSE_IMAGE, archive, { Entrypoint: ['/bin/sleep', 'infinity'] });
    importImage(archive, this.endpoint);
  }

  /** Stops and removes every pod sandbox (and so every container): nothing of it outlives containerd. */
  async removeSandboxes(): Promise<void> {
    if (!this.running) return;
    const cri = new CriClient({ endpoint: this.endpoint, timeoutMs: 20_000 });
    try {
      for (const sb of await cri.listPodSandbox()) {
        await cri.stopPodSandbox(sb.id).catch(() => undefined);
        await cri.removePodSandbox(sb.id).catch(() => undefined);
      }
    } finally {
      cri.close();
    }
  }

  /**
   * Stops containerd (SIGTERM; its containers' shims keep running, as on a real machine) and
   * removes its pod bridge: the next start may be handed another pod CIDR, and the CNI plugin
   * refuses a bridge that still holds the old address.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    await this.proc!.stop(10_000);
    await new Promise<void>((r) => execFile('ip', [...(this.o.netns ? ['-n', this.o.netns] : []), 'link', 'del', this.o.bridge], () => r()));
  }
}
