// The flags that describe a node — its name, runtime, capacity, labels, taints and timings —
// shared by `skiff agent` and `skiff server --with-agent` (a control-plane member's own node).
import { InvalidArgumentError, Option } from 'commander';
import type { AgentNodeConfig } from '../agent/agent.js';
import { parseLabels, parseTaints } from '../agent/node-object.js';
import { readFileSync } from 'node:fs';
import { parseStages, StageError, type Stages } from '../agent/runtimes/sim-stages.js';
import type { RuntimeName } from '../agent/runtimes/runtime.js';
import { DEFAULT_CRI_ENDPOINT } from '../agent/runtimes/containerd.js';
import { boolArg, durationOption, intArg, listArg } from './options.js';
import { isValidQuantity, parseQuantity } from '../api/quantity.js';

/** A stages file, read and checked when the flag is parsed: a mistake is named with its place. */
function stagesArg(path: string): Stages {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(`cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return parseStages(text, path);
  } catch (e) {
    if (e instanceof StageError) throw new InvalidArgumentError(e.message);
    throw e;
  }
}

/** A size such as 10Mi or 500000 (a Kubernetes quantity), in bytes. */
function byteQuantityArg(value: string): number {
  if (!isValidQuantity(value)) throw new InvalidArgumentError('use a quantity such as 10Mi, 1Gi or 500000');
  const n = Math.floor(parseQuantity(value));
  if (!(n > 0)) throw new InvalidArgumentError('must be more than 0');
  return n;
}

function runtimeArg(value: string): RuntimeName {
  if (value !== 'process' && value !== 'simulated' && value !== 'containerd') throw new InvalidArgumentError('use process, containerd or simulated');
  return value;
}

export function nodeOptions(): Option[] {
  return [
    new Option('--node-name <name>', 'name of the Node (default: the hostname)'),
    new Option('--node-ip <ip>', "the node's InternalIP; the log server binds to it").default('127.0.0.1'),
    new Option('--runtime <runtime>', 'process (host processes), containerd (OCI containers through CRI) or simulated (KWOK-like, nothing runs)').argParser(runtimeArg).default('process'),
    new Option('--container-runtime-endpoint <url>', 'containerd runtime: the CRI socket').default(DEFAULT_CRI_ENDPOINT),
    new Option('--cgroup-root <path>', "containerd runtime: cgroup under which this node's pods run (default /skiff/<node name>)"),
    new Option('--service-proxy <bool>', "containerd runtime: keep this node's iptables rules that route Service cluster IPs to ready endpoints (kube-proxy's job)").argParser(boolArg).default(true),
    new Option('--cluster-dns <ip,...>', "containerd runtime: the DNS server addresses pods with dnsPolicy ClusterFirst are given (default: the kube-dns Service's cluster IP, which this node's own DNS server answers)").argParser(listArg).default([]),
    new Option('--cluster-domain <domain>', 'the cluster\'s DNS domain: Services are <name>.<namespace>.svc.<domain>').default('cluster.local'),
    new Option('--resolv-conf <file>', 'the host resolver settings: pods with dnsPolicy Default get them, and cluster DNS forwards other names to its nameservers').default('/etc/resolv.conf'),
    new Option('--cluster-dns-port <port>', "containerd runtime: the port of this node's DNS server, where the node's rules send the cluster DNS address (0 = any free port)").argParser(intArg).default(0),
    new Option('--labels <k=v,...>', 'labels to register the Node with').argParser(listArg).default([]),
    new Option('--taints <k=v:Effect,...>', 'taints to register the Node with').argParser(listArg).default([]),
    new Option('--provider-id <id>', "the machine's ID at its cloud, set as the Node's spec.providerID (skiff://<group>/<instance> for `skiff cloud`)"),
    new Option('--cloud-provider <name>', 'external: a cloud controller initialises the Node, which registers tainted node.cloudprovider.kubernetes.io/uninitialized until then').choices(['external']),
    new Option('--reregister <bool>', 're-create the Node when it is deleted while the agent runs (false = upstream kubelet behaviour)').argParser(boolArg).default(true),
    new Option('--node-lease-duration-seconds <n>', 'Lease duration; renewed every quarter of it').argParser(intArg).default(40),
    durationOption('--node-status-update-frequency <duration>', 'how often node status is computed (and posted if changed)', 10_000),
    durationOption('--node-status-report-frequency <duration>', 'node status is posted at least this often even if unchanged', 60_000),
    new Option('--kubelet-port <port>', 'port of the log server the API server proxies `kubectl logs` to (0 = any free port)').argParser(intArg).default(10250),
    new Option('--max-pods <n>', 'pods capacity reported for the node').argParser(intArg).default(110),
    new Option('--cpu <quantity>', "cpu capacity to report (simulated runtime; default 32; process: the host's)"),
    new Option('--memory <quantity>', "memory capacity to report (simulated runtime; default 256Gi; process: the host's)"),
    durationOption('--sim-pod-start-delay <duration>', 'simulated runtime: time from pod start to Running', 0),
    durationOption('--sim-pod-stop-delay <duration>', 'simulated runtime: time a container takes to stop', 0),
    new Option('--sim-stages <file>', 'simulated runtime: stages (YAML) saying, by pod selector, when containers start, exit by themselves (with a code) and stop, and by node, which conditions flip when').argParser(stagesArg),
    durationOption('--restart-backoff-base <duration>', 'container restart back-off: first delay (doubles each restart)', 10_000),
    durationOption('--restart-backoff-max <duration>', 'container restart back-off: cap', 300_000),
    new Option('--container-log-max-size <quantity>', "a container's log file over this size is rotated (copied aside and emptied)").argParser(byteQuantityArg).default(10 * 1024 * 1024, '10Mi'),
    new Option('--container-log-max-files <n>', 'log files kept per container, the current one included').argParser(intArg).default(5),
    durationOption('--container-log-monitor-interval <duration>', 'how often container logs are checked for rotation', 10_000),
    durationOption('--shutdown-timeout <duration>', 'on exit, how long API calls (cordon, status, delete Node and Lease) may take after pods stopped', 10_000),
    durationOption('--request-timeout <duration>', 'timeout of each API request (not watches)', 10_000),
  ];
}

/** The node part of an AgentConfig, from parsed nodeOptions() flags. */
export function nodeConfigFrom(o: Record<string, unknown>): AgentNodeConfig {
  return {
    ...(o.nodeName ? { nodeName: o.nodeName as string } : {}),
    nodeIP: o.nodeIp as string,
    runtime: o.runtime as RuntimeName,
    ...(o.runtime === 'containerd' ? { containerRuntimeEndpoint: o.containerRuntimeEndpoint as string } : {}),
    ...(o.cgroupRoot ? { cgroupRoot: o.cgroupRoot as string } : {}),
    serviceProxy: o.serviceProxy !== false,
    clusterDns: (o.clusterDns as string[] | undefined) ?? [],
    clusterDomain: String(o.clusterDomain ?? 'cluster.local').replace(/\.$/, ''),
    resolvConf: (o.resolvConf as string | undefined) ?? '/etc/resolv.conf',
    clusterDnsPort: (o.clusterDnsPort as number | undefined) ?? 0,
    labels: parseLabels(o.labels as string[]),
    taints: parseTaints(o.taints as string[]),
    ...(o.providerId ? { providerID: o.providerId as string } : {}),
    ...(o.cloudProvider === 'external' ? { cloudProvider: 'external' as const } : {}),
    reregister: o.reregister as boolean,
    leaseDurationSeconds: Math.max(1, o.nodeLeaseDurationSeconds as number),
    statusUpdateFrequencyMs: Math.max(100, o.nodeStatusUpdateFrequency as number),
    statusReportFrequencyMs: Math.max(100, o.nodeStatusReportFrequency as number),
    kubeletPort: o.kubeletPort as number,
    maxPods: o.maxPods as number,
    ...(o.cpu ? { cpu: String(o.cpu) } : {}),
    ...(o.memory ? { memory: String(o.memory) } : {}),
    simPodStartDelayMs: o.simPodStartDelay as number,
    simPodStopDelayMs: o.simPodStopDelay as number,
    ...(o.simStages ? { simStages: o.simStages as Stages } : {}),
    restartBackoffBaseMs: Math.max(1, o.restartBackoffBase as number),
    restartBackoffMaxMs: Math.max(1, o.restartBackoffMax as number),
    containerLogMaxBytes: o.containerLogMaxSize as number,
    containerLogMaxFiles: Math.max(2, o.containerLogMaxFiles as number),
    containerLogMonitorIntervalMs: Math.max(100, o.containerLogMonitorInterval as number),
    shutdownTimeoutMs: o.shutdownTimeout as number,
    requestTimeoutMs: o.requestTimeout as number,
  };
}
