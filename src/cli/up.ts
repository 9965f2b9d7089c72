// `skiff up`: a whole local cluster in the foreground (or, with --detach, in the background) — a
// server and --nodes agents, each its own process (own process group), on the embedded store; or,
// with `--servers 3 --storage etcd`, a real 3-member etcd (127.0.0.1-3:2379/2380, data in
// <data-dir>/etcd) under 3 servers on 127.0.0.1-3:<port>. Prints "cluster ready" once every node is
// Ready. Ctrl-C / SIGTERM / SIGHUP (a lost terminal) stop the whole cluster (N6a): every node is
// told the cluster stops, so it keeps its Node and pods for the next start, then the servers stop.
import { ContainerdDaemon, containerdPrerequisites } from '../cri/containerd-daemon.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { startProcess, type ManagedProcess } from '../util/processes.js';
import { addConfigFile, boolArg, hostPortArg, intArg, listenErrorMessage } from './options.js';
import { Dashboard } from '../dashboard/server.js';
import { DEFAULT_DASHBOARD_LISTEN } from './dashboard.js';
import { systemClock } from '../util/clock.js';
import { fileLogger } from '../util/log.js';
import { userAgent } from '../version.js';
import { errorText } from '../util/error-text.js';
import { waitForReady } from '../client/wait.js';
import { ApiClient } from '../client/rest.js';
import { parseKubeconfig, renderKubeconfig } from '../pki/kubeconfig.js';
import { findHaproxy, renderHaproxyConfig } from '../server/haproxy.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import type { KubeList } from '../api/types.js';
import { isNodeReady, type Node } from '../api/kinds/node.js';
import { agentCommand } from './agent.js';
import { serverCommand } from './server.js';
import { startEtcd, type LocalEtcdCluster } from '../etcd/local-cluster.js';
import { freePorts, listenError } from '../util/ports.js';
import { DirectoryInUseError, PidLock } from '../util/pid-lock.js';
import { CLUSTER_STOP_SIGNAL, RESTART_IN_PLACE_SIGNAL } from '../util/stop-signals.js';
import { takeRestartRequests } from './restart.js';
import { runtimeChoiceLine } from './runtime-choice.js';
import { registerCluster } from './cluster-registry.js';
import { clusterOnPort, describeProcesses, liveClusterProcesses, removeClusterRun, runProcess, writeClusterRun, type ClusterRun, type RunProcess } from './cluster-run.js';
import { stopCluster } from './cluster-stop.js';
import { RestartPolicy, type RestartSetting } from './restart-policy.js';
import { EXIT_RESTART } from './exit-codes.js';
import { isDetachedSupervisor, upDetached } from './detach.js';
import { mergeClusterContext, userKubeconfigPath } from './user-kubeconfig.js';
import { layoutConflict, readClusterLayout, upContainerdDir, upEtcdMembers, writeClusterLayout, type ClusterLayout } from './cluster-dir.js';
import { DEFAULT_CLUSTER_DIR } from './admin-client.js';
import { parseNodesFlag, type AutoscalerGroup } from '../cloud/autoscaler/autoscaler.js';
import type { InstanceType } from '../cloud/api.js';
import { CloudClient } from '../cloud/client.js';
import { SIM_LABEL } from '../sim/fleet.js';
import { asAgentFlags, startNodeGroups, stopCloudInstancesWithCluster } from '../cloud/node-groups.js';
import { InvalidArgumentError } from 'commander';
import { generateToken } from '../auth/bootstrap-token.js';
import { SKIFF_BIN, SERVER_NODE_FLAGS } from '../util/skiff-bin.js';
import { lockHolder } from '../util/pid-lock.js';
import { conversionSay, copyUpStoreIntoEtcd, discardUnfinishedConversion, keepUpSqliteFile, notFinishedHint, requestConversion, writeConversion } from './convert-to-etcd.js';
import { SUPERVISOR_REQUEST_SIGNAL, takeSupervisorRequest, type SupervisorRequest } from './supervisor-request.js';
import { endpointSay, requestEndpointMove, writeEndpointMove } from './endpoint-move.js';
import { rmSync } from 'node:fs';

/** Flags `skiff up` sets itself on the processes it starts; users cannot pass them through. */
const CONTROLLED = new Set(['--data-dir', '--listen', '--storage', '--etcd-endpoints', '--token', '--server', '--ca-file', '--ca-cert-hash', '--kubeconfig', '--node-name', '--node-ip', '--runtime', '--config', '--kubelet-port', '--insecure-skip-ca-verification', '--with-agent', '--control-plane-endpoint', '--cloud-provider', '--cloud-endpoint', '--provider-id', '--container-runtime-endpoint']);

/**
 * Declares every other flag of `skiff server` and `skiff agent` on `cmd` as a hidden option (so
 * they parse in any order, mixed with up's own), and returns a function that gives back, after
 * parsing, the arguments to pass to the server and to the agents — each flag to whichever knows it.
 */
export function addPassthroughOptions(cmd: Command, server: readonly Option[], agent: readonly Option[]): () => { server: string[]; agent: string[] } {
  const own = new Set(cmd.options.map((o) => o.long));
  const entries = new Map<string, { takesValue: boolean; server: boolean; agent: boolean; attr: string }>();
  for (const [target, opts] of [['server', server], ['agent', agent]] as const) {
    for (const o of opts) {
      if (!o.long || own.has(o.long) || CONTROLLED.has(o.long) || o.long === '--help') continue;
      const e = entries.get(o.long) ?? { takesValue: o.required || o.optional, server: false, agent: false, attr: '' };
      e[target] = true;
      entries.set(o.long, e);
    }
  }
  for (const [long, e] of entries) {
    const opt = new Option(e.takesValue ? `${long} <value>` : long).hideHelp();
    if (e.takesValue) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    cmd.addOption(opt);
    e.attr = opt.attributeName();
  }
  return () => {
    const out = { server: [] as string[], agent: [] as string[] };
    for (const [long, e] of entries) {
      const v = cmd.getOptionValue(e.attr) as string[] | boolean | undefined;
      if (v === undefined || v === false) continue;
      const args = Array.isArray(v) ? v.flatMap((x) => [long, x]) : [long];
      if (e.server) out.server.push(...args);
      if (e.agent) out.agent.push(...args);
    }
    return out;
  };
}

/**
 * Several members on one machine must not share an audit log (each rotates its own file): each
 * writes its own, named after it beside the path given (audit.log: audit-server-1.log).
 */
export function memberAuditLog(args: readonly string[], member: string): string[] {
  return args.map((a, i) => {
    if (args[i - 1] !== '--audit-log-path' || a === '-') return a;
    const ext = extname(a);
    return `${a.slice(0, a.length - ext.length)}-${member}${ext}`;
  });
}

/** ": <why>" from the last line of a log that starts with `prefix` (a command's one-line failure), or "". */
function lastError(logFile: string, prefix: string): string {
  try {
    const line = readFileSync(logFile, 'utf8').split('\n').reverse().find((l) => l.startsWith(prefix));
    return line ? `: ${line.slice(prefix.length).trim()}` : '';
  } catch {
    return '';
  }
}


export function upCommand(): Command {
  const cmd = new Command('up')
    .description('start a local cluster: a server and node agents as separate processes; Ctrl-C stops it gracefully')
    .option('--data-dir <dir>', 'cluster data directory', DEFAULT_CLUSTER_DIR)
    .option('--nodes <n>', 'node agents to start (simulated runtime: more than 10 run as one skiff sim process)', intArg, 2)
    .option('--servers <n>', 'API servers to start', intArg, 1)
    .option('--storage <kind>', 'sqlite or etcd', 'sqlite')
    .option('--port <port>', 'API server port', intArg, 6443)
    .option('--runtime <runtime>', 'process, simulated or containerd (a containerd per node, started here; needs root, containerd, runc and the CNI plugins)', 'process')
    .option('--control-plane-endpoint <host:port>', 'where HAProxy serves every API server as one (default with --servers > 1 and HAProxy installed: 127.0.0.1:<port+1>); given to a running cluster, it is added or moved there', hostPortArg)
    .option('--ready-timeout <seconds>', 'how long to wait for every node to be Ready', intArg, 120)
    .addOption(new Option('--cloud <name>', 'run the nodes in a local cloud (skiff cloud serve) with the cluster autoscaler, in place of --nodes').choices(['local']))
    .option('--node-group <min:max:group>', 'with --cloud: a node group the autoscaler manages; its first MIN instances start with the cluster (repeatable)', (v: string, p: AutoscalerGroup[]) => [...p, nodeGroupArg(v)], [] as AutoscalerGroup[])
    .option('--instance-type <cpu=N,memory=Q,pods=N>', 'with --cloud: the machines of every node group (default: medium, 4 cpu, 16Gi, 110 pods)', instanceTypeArg)
    .option('--dashboard <bool>', 'serve the dashboard (as `skiff dashboard`) while the cluster runs', boolArg, true)
    .option('--dashboard-listen <host:port>', 'where the dashboard listens (another free port when this one is taken)', hostPortArg, DEFAULT_DASHBOARD_LISTEN)
    .option('--detach', 'return once the cluster is ready and leave it running in the background (its output in <data-dir>/logs/up.log; skiff down stops it)', false)
    .addOption(new Option('--restart <policy>', 'start an API server of several again when it exits unexpectedly, as systemd Restart=on-failure does (no: leave it down)').choices(['on-failure', 'no']).default('on-failure'))
    .option('--convert', 'with --storage etcd: move the single-server SQLite cluster in --data-dir into etcd (every object kept, with its uid) and grow it to --servers members; a running cluster is converted in place, its nodes and pods running on', false)
    .option('--kubeconfig-update <bool>', "merge the cluster's admin context (skiff-<name>) into $KUBECONFIG or ~/.kube/config and make it current", boolArg, true)
    .addHelpText('after', '\nAny other flag of `skiff server` or `skiff agent` (e.g. timing flags such as --node-monitor-grace-period or\n--node-lease-duration-seconds) is passed through to the processes that know it.');
  const passthrough = addPassthroughOptions(cmd, serverCommand().options, agentCommand().options);
  addConfigFile(cmd);
  cmd.action(async (o: { dataDir: string; nodes: number; servers: number; storage: 'sqlite' | 'etcd'; port: number; runtime: string; readyTimeout: number; controlPlaneEndpoint?: { host: string; port: number }; cloud?: 'local'; nodeGroup: AutoscalerGroup[]; instanceType?: InstanceType; dashboard: boolean; dashboardListen: { host: string; port: number }; detach: boolean; kubeconfigUpdate: boolean; restart: RestartSetting; convert: boolean }) => {
    const dataDir = resolve(o.dataDir);
    const logDir = join(dataDir, 'logs');
    if (o.detach && !isDetachedSupervisor()) {
      // The same command line, minus --detach, becomes the supervisor in the background.
      const args = process.argv.slice(process.argv.indexOf('up') + 1).filter((a) => a !== '--detach');
      process.exit(await upDetached(args, dataDir, (o.readyTimeout + 120) * 1000));
    }
    const detached = isDetachedSupervisor();
    if (o.storage !== 'sqlite' && o.storage !== 'etcd') {
      console.error(`skiff up: --storage must be sqlite or etcd (got ${o.storage})`);
      process.exit(2);
    }
    if (o.servers < 1) {
      console.error('skiff up: --servers must be at least 1');
      process.exit(2);
    }
    if (o.servers > 1 && o.storage !== 'etcd') {
      console.error(`skiff up: --servers ${o.servers} needs --storage etcd (SQLite is a single server's embedded store; several API servers must share etcd)`);
      process.exit(2);
    }
    if (o.servers > 254) {
      console.error('skiff up: at most 254 servers (one loopback address each)');
      process.exit(2);
    }
    if (!['process', 'simulated', 'containerd'].includes(o.runtime)) {
      console.error(`skiff up: --runtime must be process, simulated or containerd (got ${o.runtime})`);
      process.exit(2);
    }
    const withContainerd = o.runtime === 'containerd';
    if (withContainerd) {
      const missing = containerdPrerequisites();
      if (missing.length > 0) {
        console.error(`skiff up: --runtime containerd needs ${missing.join(', ')}`);
        process.exit(2);
      }
      if (o.cloud) {
        console.error('skiff up: --runtime containerd does not combine with --cloud local yet (its instances are agents on the simulated or process runtime)');
        process.exit(2);
      }
    }
    if (o.cloud && o.nodeGroup.length === 0) {
      console.error('skiff up: --cloud local needs at least one --node-group MIN:MAX:GROUP');
      process.exit(2);
    }
    if (!o.cloud && (o.nodeGroup.length > 0 || o.instanceType)) {
      console.error('skiff up: --node-group and --instance-type need --cloud local');
      process.exit(2);
    }
    const have = readClusterLayout(dataDir);
    if (o.convert) {
      if (o.storage !== 'etcd') {
        console.error('skiff up: --convert moves a SQLite cluster into etcd: it needs --storage etcd (and --servers N for the members it grows to)');
        process.exit(2);
      }
      if (have?.storage !== 'sqlite') {
        console.error(have ? `skiff up: ${dataDir} runs on etcd already: start it with --servers ${have.etcdMembers === 1 ? 1 : 3} --storage etcd, without --convert` : `skiff up: ${dataDir} holds no cluster to convert (a directory of a single-server skiff up on SQLite)`);
        process.exit(2);
      }
      // The cluster runs: the skiff up running it converts it, its nodes running on.
      const holder = lockHolder(join(dataDir, 'up.lock'));
      if (holder !== undefined && holder !== process.pid) process.exit(await requestConversion(dataDir, holder, o.servers, (o.readyTimeout + 300) * 1000));
    }
    // Several members behind one address (HAProxy), so kubectl and every other client survive the
    // loss of any member, as agents do by themselves.
    const haproxyBin = findHaproxy();
    if (o.controlPlaneEndpoint && !haproxyBin) {
      console.error('skiff up: --control-plane-endpoint runs HAProxy there, and HAProxy is not installed (Debian: apt-get install haproxy; or set SKIFF_HAPROXY_BIN)');
      process.exit(2);
    }
    // The cluster runs: the skiff up running it serves it at the endpoint given (added, or moved).
    const running = o.convert ? undefined : lockHolder(join(dataDir, 'up.lock'));
    if (o.controlPlaneEndpoint && running !== undefined && running !== process.pid) {
      process.exit(await requestEndpointMove(dataDir, running, o.controlPlaneEndpoint, (o.readyTimeout + 300) * 1000));
    }
    // --port 0: a free port, chosen now, so every member shares it and the addresses are known up front.
    const ports = o.port === 0 ? await freePorts(2) : [o.port, o.port + 1];
    const port = ports[0]!;
    const freeEndpointPort = ports[1]!;
    const cloudUrl = o.cloud ? `http://127.0.0.1:${(await freePorts(1))[0]!}` : undefined;
    let endpoint = o.controlPlaneEndpoint ?? (o.servers > 1 && haproxyBin ? { host: '127.0.0.1', port: freeEndpointPort } : undefined);
    const urlOf = (e: { host: string; port: number }) => `https://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;
    let endpointUrl = endpoint ? urlOf(endpoint) : undefined;
    mkdirSync(logDir, { recursive: true });
    // A second `up` on the same directory would start servers and agents over the running cluster's
    // database and nodes: refuse before starting anything, naming the command that stops the first.
    try {
      PidLock.acquire(join(dataDir, 'up.lock'), `the cluster directory ${dataDir}`);
    } catch (e) {
      if (!(e instanceof DirectoryInUseError)) throw e;
      throw new Error(`the cluster directory ${dataDir} is in use by process ${e.holderPid} (a skiff up that still runs): skiff status shows it, skiff down --data-dir ${dataDir} stops it`);
    }
    // What an earlier up left running (its supervisor killed, or its terminal lost before SIGHUP
    // stopped it cleanly): starting again over it would only meet its locks and ports one by one.
    const leftovers = liveClusterProcesses(dataDir).filter((p) => p.pid !== process.pid);
    if (leftovers.length > 0) {
      throw new Error(`processes of an earlier skiff up of ${dataDir} still run: ${describeProcesses(leftovers)}; skiff down --data-dir ${dataDir} stops them (their nodes and pods are kept)`);
    }
    // A cluster converted from SQLite keeps its first server where it was (server, control-plane).
    const converted = o.convert || have?.convertedFrom === 'sqlite';
    const layout: ClusterLayout = { storage: o.storage, etcdMembers: o.storage === 'etcd' ? (o.servers === 1 ? 1 : 3) : 0, ...(converted && o.storage === 'etcd' ? { convertedFrom: 'sqlite' as const } : {}) };
    const conflict = o.convert ? undefined : layoutConflict(dataDir, have, layout);
    if (conflict) {
      console.error(`skiff up: ${conflict}`);
      process.exit(2);
    }
    const pass = passthrough();
    const name = registerCluster(dataDir);
    const servers: UpMember[] = Array.from({ length: o.servers }, (_, i) => upMember(dataDir, i, o.servers, converted));
    const memberUrl = (s: (typeof servers)[number]) => `https://${s.host}:${port}`;
    const agents = new Map<string, ManagedProcess>();
    let etcd: LocalEtcdCluster | undefined;
    let haproxy: ManagedProcess | undefined;
    let cloudProc: ManagedProcess | undefined;
    let stopping = false;
    let dashboard: Dashboard | undefined;
    /** With --runtime containerd: each node's own containerd (its own socket, root and pod bridge). */
    const runtimes = new Map<string, ContainerdDaemon>();
    /** The flags that point a node's agent at its containerd. */
    const runtimeFlags = (node: string): string[] => {
      const d = runtimes.get(node);
      return d ? ['--container-runtime-endpoint', d.endpoint] : [];
    };
    // The run record (run.json): what `skiff status` shows and what `skiff down` or the next up finds.
    const run: ClusterRun = {
      name: '',
      supervisor: runProcess('skiff up', 'up', process.pid)!,
      state: 'starting',
      detached,
      startedAt: new Date().toISOString(),
      apiServers: [],
      endpoint: '',
      ...(detached ? { log: join(logDir, 'up.log') } : {}),
      processes: [],
    };
    const record = (changes: Partial<ClusterRun> = {}) => {
      Object.assign(run, changes);
      const procs: (RunProcess | undefined)[] = [
        ...servers.map((s) => runProcess(s.name, 'server', s.proc?.child.pid)),
        ...[...agents].map(([n, p]) => runProcess(n, n === 'sim' ? 'sim' : 'agent', p.child.pid)),
        runProcess('cloud', 'cloud', cloudProc?.child.pid),
        runProcess('haproxy', 'haproxy', haproxy?.child.pid),
        ...(etcd?.members ?? []).map((m) => runProcess(`etcd ${m.name}`, 'etcd', m.pid)),
      ];
      run.processes = procs.filter((p): p is RunProcess => p !== undefined);
      if (run.name) writeClusterRun(dataDir, run);
    };
    const stopAll = async (code: number) => {
      if (stopping) return;
      stopping = true;
      console.log('stopping cluster: its nodes and pods are kept for the next start...');
      record({ state: 'stopping' });
      await dashboard?.stop();
      // The whole cluster stops (N6a), not its nodes leaving: each agent is told so, stops its
      // containers and keeps its Node and pods. Agents first, all at once; then the servers (each
      // its own node too, and each removes itself from default/kubernetes), then etcd under them.
      await Promise.all([...agents.values()].map((p) => p.stop(60_000, CLUSTER_STOP_SIGNAL)));
      // The cloud's machines are switched off like the agents (stopped through the cloud, kept for
      // the next start), then the cloud goes.
      if (cloudUrl && cloudProc) await stopCloudInstancesWithCluster(new CloudClient(cloudUrl));
      await cloudProc?.stop(5_000);
      await Promise.all(servers.map((s) => s.proc?.stop(60_000, CLUSTER_STOP_SIGNAL)));
      await haproxy?.stop(5_000);
      await etcd?.stop();
      // Their agents stopped their pods; nothing of the cluster runs in them any more.
      await Promise.all([...runtimes.values()].map((d) => d.stop()));
      // Processes a user started beside the cluster (an agent on <data-dir>/agents/NAME) stop with it.
      await stopCluster(dataDir, { say: (l) => console.log(l), except: [process.pid] }).catch((e: unknown) => console.error(`could not stop every process of the cluster: ${errorText(e)}`));
      removeClusterRun(dataDir);
      console.log('cluster stopped');
      process.exit(code);
    };
    // A lost terminal (SIGHUP) stops the cluster as Ctrl-C does, instead of leaving its servers and
    // agents behind; what is printed meanwhile has nowhere to go, and must not stop the stopping.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stopAll(0));
    // `skiff up --convert` or `--control-plane-endpoint` over this directory asks for a change
    // (supervisor-request.ts); it can be made once the cluster is ready.
    const refuseRequest = (req: SupervisorRequest | undefined, reason: string) => {
      const startedAt = new Date().toISOString();
      if (req?.kind === 'endpoint') writeEndpointMove(dataDir, { state: 'failed', startedAt, reason, endpoint: `${req.endpoint.host}:${req.endpoint.port}` });
      else writeConversion(dataDir, { state: 'failed', servers: req?.servers ?? 0, startedAt, reason });
      console.error(`${req?.kind === 'endpoint' ? 'moving the control-plane endpoint' : 'conversion to etcd'} refused: ${reason}`);
    };
    let onRequest = (req: SupervisorRequest | undefined) => refuseRequest(req, 'the cluster is still starting; ask again once it is ready');
    // The same signal also asks for a member's restart (restart.ts), with a request file of its own.
    process.on(SUPERVISOR_REQUEST_SIGNAL, () => {
      const req = takeSupervisorRequest(dataDir);
      if (req) onRequest(req);
    });

    // Ports first, so a clash is one line naming the flag that moves it, before anything starts.
    const etcdMembers = upEtcdMembers(dataDir, layout.etcdMembers);
    const wanted: { host: string; port: number; what: string; remedy: string }[] = [
      ...servers.map((s) => ({ host: s.host, port, what: o.servers === 1 ? 'the API server' : 'the API servers', remedy: 'choose another with --port N' })),
      ...(endpoint ? [{ ...endpoint, what: 'the control-plane endpoint', remedy: 'choose another with --control-plane-endpoint HOST:PORT' }] : []),
      // up runs etcd on its usual ports; another etcd there (another up?) must be stopped first.
      ...etcdMembers.flatMap((m) => [m.clientPort, m.peerPort].map((p) => ({ host: m.host, port: p, what: "etcd's, at its usual port", remedy: 'stop the etcd (or the other skiff up) that holds it' }))),
    ];
    for (const w of wanted) {
      const err = await listenError(w.host, w.port);
      if (!err) continue;
      // Most often another skiff cluster holds it: name it, and the command that stops it.
      const owner = clusterOnPort(w.port);
      const remedy = owner
        ? `it is ${owner.command} (pid ${owner.pid})${owner.clusterDir ? ` of the cluster in ${owner.clusterDir}: skiff down --data-dir ${owner.clusterDir} stops it` : ''}; or ${w.remedy}`
        : w.remedy;
      console.error(`skiff up: ${listenErrorMessage(err, w.what, remedy) ?? `${w.host}:${w.port} (${w.what}) cannot be used: ${errorText(err)}`}`);
      process.exit(2);
    }
    record({ name });
    // A conversion's layout is written once every member serves from etcd (convertedToEtcd).
    if (!o.convert) writeClusterLayout(dataDir, layout);
    if (o.storage === 'sqlite') {
      const unfinished = discardUnfinishedConversion(dataDir);
      if (unfinished) console.log(unfinished);
    }
    if (o.convert) rmSync(join(dataDir, 'etcd'), { recursive: true, force: true });

    // One join token per cluster directory, kept across runs: a new one each run would leave every
    // earlier one valid in the store. With etcd it also seals the shared CA, so it must not change.
    let token = generateToken();
    const tokenFile = join(dataDir, 'token');
    if (existsSync(tokenFile)) token = readFileSync(tokenFile, 'utf8').trim();
    else writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const etcdArgs: string[] = [];
    if (o.storage === 'etcd') {
      const members = etcdMembers.length;
      try {
        console.log(`starting etcd (${members} member${members > 1 ? 's' : ''}; data: ${join(dataDir, 'etcd')})`);
        etcd = await startEtcd({
          members,
          dir: join(dataDir, 'etcd'),
          addresses: etcdMembers,
          progressNotifyIntervalMs: 1000,
          startTimeoutMs: 30_000,
        });
      } catch (e) {
        console.error(`skiff up: cannot start etcd: ${(e as Error).message}`);
        return stopAll(1);
      }
      etcdArgs.push('--etcd-endpoints', etcd.endpoints.join(','));
      record();
    }
    let storage = o.storage;
    const conversionStartedAt = new Date().toISOString();
    if (o.convert && etcd) {
      // The cluster is not running: its store is copied before any server starts.
      writeConversion(dataDir, { state: 'converting', servers: o.servers, startedAt: conversionStartedAt });
      try {
        await copyUpStoreIntoEtcd({ dir: dataDir, etcdEndpoints: etcd.endpoints, token, say: conversionSay(dataDir, (l) => console.log(l)) });
      } catch (e) {
        writeConversion(dataDir, { state: 'failed', servers: o.servers, startedAt: conversionStartedAt, reason: errorText(e) });
        console.error(`skiff up: the conversion to etcd failed: ${errorText(e)}; ${notFinishedHint(dataDir, o.servers)}`);
        return stopAll(1);
      }
    }
    /** The cluster runs on etcd now: its layout says so, and the SQLite file is put aside. */
    const convertedToEtcd = (members: number, startedAt: string) => {
      writeClusterLayout(dataDir, { storage: 'etcd', etcdMembers: members === 1 ? 1 : 3, convertedFrom: 'sqlite' });
      const kept = keepUpSqliteFile(dataDir);
      writeConversion(dataDir, { state: 'done', servers: members, startedAt, keptSqlite: kept });
      return kept;
    };

    if (withContainerd) {
      const nodes = [...servers.map((s) => s.nodeName), ...Array.from({ length: o.nodes }, (_, i) => `node-${i + 1}`)];
      console.log(`starting ${nodes.length} containerd${nodes.length > 1 ? 's' : ''}, one per node (data: ${join(dataDir, 'containerd')})`);
      for (const [i, node] of nodes.entries()) {
        // The pod CIDR comes from the control plane (--allocate-node-cidrs), through the node's agent.
        const d = new ContainerdDaemon({ dir: upContainerdDir(dataDir, node), bridge: `skiff${i}`, network: `skiff-${node}` });
        try {
          await d.start();
        } catch (e) {
          console.error(`skiff up: containerd for ${node} did not start: ${errorText(e)}`);
          return stopAll(1);
        }
        runtimes.set(node, d);
      }
    }

    const restarts = new RestartPolicy(o.restart);
    /** Members waiting out their restart delay. */
    const restarting = new Set<string>();
    /** Members told to restart in place by `skiff restart`, until they exit. */
    const restartAsked = new Set<string>();
    process.on(SUPERVISOR_REQUEST_SIGNAL, () => {
      for (const name of takeRestartRequests(dataDir)) {
        const s = servers.find((x) => x.name === name);
        if (!s || stopping) continue;
        restarts.forget(name);
        const running = s.proc !== undefined && s.proc.child.exitCode === null && s.proc.child.signalCode === null;
        if (running) {
          console.log(`restarting ${name} in place, as skiff restart asked`);
          restartAsked.add(name);
          s.proc!.signal(RESTART_IN_PLACE_SIGNAL);
        } else if (!restarting.has(name)) {
          console.log(`starting ${name} again on https://${s.host}:${port}, as skiff restart asked`);
          startServer(s);
        }
      }
    });
    const startServer = (s: (typeof servers)[number]) => {
      const log = join(logDir, `${s.name}.log`);
      const startedAt = Date.now();
      const proc = startProcess({
        name: s.name,
        command: process.execPath,
        args: [
          ...SERVER_NODE_FLAGS, SKIFF_BIN, 'server', '--data-dir', s.dir, '--listen', `${s.host}:${port}`, '--storage', storage, ...etcdArgs,
          ...(endpoint ? ['--control-plane-endpoint', `${endpoint.host}:${endpoint.port}`] : []),
          // Every member is a control-plane node too (labelled and tainted as kubeadm's are).
          '--with-agent', '--node-name', s.nodeName, '--node-ip', s.host, '--runtime', o.runtime, '--kubelet-port', '0', ...runtimeFlags(s.nodeName),
          ...(withContainerd ? ['--allocate-node-cidrs', 'true'] : []),
          ...(cloudUrl ? ['--cloud-provider', 'local', '--cloud-endpoint', cloudUrl, ...o.nodeGroup.flatMap((g) => ['--nodes', `${g.min}:${g.max}:${g.name}`])] : []),
          ...(servers.length > 1 ? memberAuditLog(pass.server, s.name) : pass.server),
        ],
        // Through the environment, not argv: other local users can read a command line with ps.
        env: { ...process.env, SKIFF_TOKEN: token },
        output: log,
      });
      s.proc = proc;
      record();
      void proc.exited.then(({ code, signal }) => {
        // A member being replaced (its store moved, its endpoint changed) is started again by that work.
        if (stopping || s.replacing) return;
        // A restart in place (asked for by `skiff restart`, or the member's own SIGUSR2): at once.
        if (code === EXIT_RESTART || restartAsked.delete(s.name)) {
          console.log(`starting ${s.name} again on https://${s.host}:${port} (restart in place)`);
          startServer(s);
          return;
        }
        const exited = `${s.name} exited (code ${code}, signal ${signal})${lastError(log, 'skiff server:')}; see ${log}`;
        // One member of several going away is what HA is for, and it is started again in place.
        const next = servers.length > 1 ? restarts.next(s.name, { code, signal }, Date.now() - startedAt) : { reason: 'it is the only server' };
        if ('delayMs' in next) {
          console.error(`${exited}; starting it again in ${next.delayMs / 1000} s (--restart=no leaves it down)`);
          restarting.add(s.name);
          setTimeout(() => {
            restarting.delete(s.name);
            if (stopping) return;
            console.log(`starting ${s.name} again on https://${s.host}:${port}`);
            startServer(s);
          }, next.delayMs).unref();
          return;
        }
        console.error(servers.length > 1 ? `${exited}; not started again: ${next.reason}` : exited);
        // The last one (or the only one) ends the cluster.
        const down = (x: (typeof servers)[number]) => x.proc === undefined || x.proc === proc || x.proc.child.exitCode !== null || x.proc.child.signalCode !== null;
        if (restarting.size === 0 && servers.every(down)) void stopAll(1);
      });
    };
    try {
      // The first server creates the cluster CA (sealed in etcd); the others load it.
      for (const [i, s] of servers.entries()) {
        if (i > 1 && !o.convert) break;
        startServer(s);
        console.log(`starting ${s.name} on https://${s.host}:${port} (logs: ${join(logDir, `${s.name}.log`)})`);
        // A converted cluster grows one member at a time, as it does while it runs.
        if (i === 0 || o.convert) await waitForReady(join(s.dir, 'kubeconfig'), 60_000, (msg) => console.log(msg), memberUrl(s));
      }
      for (const s of o.convert ? [] : servers.slice(2)) {
        startServer(s);
        console.log(`starting ${s.name} on https://${s.host}:${port} (logs: ${join(logDir, `${s.name}.log`)})`);
      }
      await Promise.all(servers.slice(1).map((s) => waitForReady(join(s.dir, 'kubeconfig'), 60_000, undefined, memberUrl(s))));
    } catch (e) {
      console.error(`skiff up: ${(e as Error).message}`);
      return stopAll(1);
    }
    /** HAProxy in front of every member, at the control-plane endpoint; false when it does not answer. */
    const startHaproxy = async (at: { host: string; port: number }, atUrl: string): Promise<boolean> => {
      const cfg = join(dataDir, 'haproxy.cfg');
      writeFileSync(cfg, renderHaproxyConfig({ bindHost: at.host, bindPort: at.port, members: servers.map((s) => ({ host: s.host, port: port })) }));
      const log = join(logDir, 'haproxy.log');
      const proc = (haproxy = startProcess({ name: 'haproxy', command: haproxyBin!, args: ['-db', '-f', cfg], output: log }));
      record();
      void proc.exited.then(({ code, signal }) => {
        if (!stopping && haproxy === proc) console.error(`haproxy exited (code ${code}, signal ${signal}); see ${log}: kubectl through ${atUrl} no longer works (the contexts admin@skiff-server-N name each member)`);
      });
      console.log(`starting HAProxy on ${atUrl} in front of the ${servers.length} API servers (logs: ${log})`);
      try {
        await waitForReady(join(servers[0]!.dir, 'kubeconfig'), 30_000, undefined, atUrl);
        return true;
      } catch (e) {
        console.error(`skiff up: HAProxy on ${atUrl} does not answer: ${(e as Error).message}; see ${log}`);
        return false;
      }
    };
    // The admin kubeconfig, where `skiff kubectl` and the other commands look: the shared endpoint
    // (or the only server), and with several servers a context per member that the commands fail over among.
    const kubeconfig = join(dataDir, 'kubeconfig');
    const writeAdminKubeconfig = () => {
      const urls = servers.map(memberUrl);
      const admin = parseKubeconfig(readFileSync(join(servers[0]!.dir, 'kubeconfig'), 'utf8'), (p) => readFileSync(p, 'utf8'));
      writeFileAtomic(
        kubeconfig,
        renderKubeconfig({
          clusterName: 'skiff',
          server: endpointUrl ?? urls[0]!,
          caPem: admin.caPem!,
          user: 'admin',
          ...(admin.clientCertPem ? { clientCertPem: admin.clientCertPem } : {}),
          ...(admin.clientKeyPem ? { clientKeyPem: admin.clientKeyPem } : {}),
          ...(servers.length > 1 ? { members: servers.map((s, i) => ({ name: s.name, server: urls[i]! })) } : {}),
        }),
      );
    };
    const serverUrls = servers.map(memberUrl);
    if (endpoint && endpointUrl && !(await startHaproxy(endpoint, endpointUrl))) return stopAll(1);
    writeAdminKubeconfig();
    if (o.convert) {
      const kept = convertedToEtcd(o.servers, conversionStartedAt);
      console.log(`the cluster runs on etcd now; its SQLite file is kept as ${kept} (remove it once you no longer want to roll back)`);
    }

    let cloudNodes = 0;
    if (cloudUrl) {
      const log = join(logDir, 'cloud.log');
      cloudProc = startProcess({
        name: 'cloud',
        command: process.execPath,
        args: [
          SKIFF_BIN, 'cloud', 'serve', '--data-dir', join(dataDir, 'cloud'), '--listen', cloudUrl.replace('http://', ''),
          ...[...new Set(serverUrls)].flatMap((u) => ['--server', u]), '--ca-file', join(servers[0]!.dir, 'tls', 'ca.crt'), '--runtime', o.runtime,
          ...asAgentFlags(pass.agent),
        ],
        env: { ...process.env, SKIFF_TOKEN: token },
        output: log,
      });
      record();
      console.log(`starting the local cloud on ${cloudUrl} (logs: ${log})`);
      try {
        cloudNodes = await startNodeGroups(new CloudClient(cloudUrl), o.nodeGroup, o.instanceType);
      } catch (e) {
        console.error(`skiff up: the local cloud did not start: ${errorText(e)}; see ${log}`);
        return stopAll(1);
      }
    }

    // Many simulated nodes run as one fleet process (`skiff sim`): the same agent code per node,
    // one process and a few connections instead of one each.
    const fleet = !cloudUrl && o.runtime === 'simulated' && o.nodes > FLEET_THRESHOLD ? o.nodes : 0;
    const names = cloudUrl || fleet > 0 ? [] : Array.from({ length: o.nodes }, (_, i) => `node-${i + 1}`);
    if (fleet > 0) {
      const log = join(logDir, 'sim.log');
      const p = startProcess({
        name: 'sim',
        command: process.execPath,
        args: [SKIFF_BIN, 'sim', '--kubeconfig', kubeconfig, '--nodes', String(fleet), '--name-prefix', 'node', '--data-dir', join(dataDir, 'sim'), ...pass.agent],
        output: log,
      });
      agents.set('sim', p);
      void p.exited.then(({ code, signal }) => {
        if (stopping) return;
        agents.delete('sim');
        console.error(`the simulated fleet exited (code ${code}, signal ${signal})${lastError(log, 'skiff sim:')}; see ${log}`);
      });
      console.log(`starting ${fleet} simulated nodes in one process (skiff sim; log: ${log})`);
    }
    for (const name of names) {
      const log = join(logDir, `${name}.log`);
      const p = startProcess({
        name,
        command: process.execPath,
        args: [
          SKIFF_BIN, 'agent',
          // Every member: the agent fails over among them (and learns them anyway from default/kubernetes).
          ...[...new Set(serverUrls)].flatMap((u) => ['--server', u]),
          '--ca-file', join(servers[0]!.dir, 'tls', 'ca.crt'),
          '--data-dir', join(dataDir, 'agents', name),
          '--node-name', name,
          '--runtime', o.runtime,
          '--kubelet-port', '0',
          ...runtimeFlags(name),
          ...pass.agent,
        ],
        env: { ...process.env, SKIFF_TOKEN: token },
        output: log,
      });
      agents.set(name, p);
      void p.exited.then(({ code, signal }) => {
        if (stopping) return;
        agents.delete(name);
        if (code === 0) console.log(`agent ${name} exited (retired or stopped); see ${log}`);
        else console.error(`agent ${name} exited (code ${code}, signal ${signal})${lastError(log, 'skiff agent:')}; see ${log}`);
      });
    }
    record({ apiServers: serverUrls, endpoint: endpointUrl ?? serverUrls[0]! });
    console.log(runtimeChoiceLine({ runtime: o.runtime, explicit: cmd.getOptionValueSource('runtime') !== 'default', missingForContainerd: o.runtime === 'process' ? containerdPrerequisites() : [] }));
    if (names.length > 0) console.log(`starting ${names.length} node agent${names.length > 1 ? 's' : ''} (${o.runtime} runtime; logs: ${join(logDir, 'node-*.log')})`);

    const client = ApiClient.fromKubeconfig(kubeconfig, { timeoutMs: 5000 });
    const deadline = Date.now() + o.readyTimeout * 1000;
    // A cluster started again finds its Nodes still Ready from before it stopped: only a node whose
    // agent has reported since this up started counts.
    const startedAt = Date.parse(run.startedAt);
    const allNodes = [...servers.map((s) => s.nodeName), ...names];
    let ready = 0;
    while (!stopping) {
      try {
        const list = await client.get<KubeList<Node>>('/api/v1/nodes');
        ready = list.items.filter((n) => (allNodes.includes(n.metadata.name ?? '') || n.spec?.providerID?.startsWith('skiff://') || (fleet > 0 && n.metadata.labels?.[SIM_LABEL] === 'node')) && isNodeReady(n) && heardSince(n, startedAt)).length;
        if (ready >= allNodes.length + cloudNodes + fleet) break;
      } catch {
        /* not yet */
      }
      if (Date.now() > deadline) {
        console.error(`skiff up: only ${ready} of ${allNodes.length + cloudNodes + fleet} nodes became Ready within ${o.readyTimeout}s; see ${logDir}`);
        client.close();
        return stopAll(1);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    client.close();
    const ha =
      servers.length > 1
        ? `\n  ${servers.length} API servers: ${serverUrls.join(', ')}; etcd: ${etcd?.endpoints.join(', ')}` +
          (endpointUrl
            ? `\n  control-plane endpoint: ${endpointUrl} (HAProxy): kubectl keeps working while any member is down`
            : `\n  HAProxy is not installed, so there is no shared endpoint: the kubeconfig names ${serverUrls[0]}; when it is down, use` +
              ` kubectl --context admin@skiff-${servers[1]!.name} (one context per member; skiff's own commands fail over by themselves).` +
              ` Install HAProxy (Debian: apt-get install haproxy) and up runs it on 127.0.0.1:${freeEndpointPort}.`)
        : endpointUrl
          ? `\n  control-plane endpoint: ${endpointUrl} (HAProxy)`
          : '';
    const workers = names.length + cloudNodes + fleet;
    const counted = `${servers.length} control-plane node${servers.length === 1 ? '' : 's'}${workers > 0 ? ` and ${workers} node${workers === 1 ? '' : 's'}` : ''}${cloudUrl ? ` (local cloud ${cloudUrl}, autoscaled: ${o.nodeGroup.map((g) => `${g.name} ${g.min}..${g.max}`).join(', ')}; skiff cloud instances${o.dataDir === DEFAULT_CLUSTER_DIR ? '' : ` --data-dir ${dataDir}`} lists its machines)` : ''}`;
    const images = withContainerd
      ? `\n  each node runs its own containerd; an image without a registry goes into every node with skiff image load FILE.tar${o.dataDir === DEFAULT_CLUSTER_DIR ? '' : ` --data-dir ${dataDir}`}`
      : '';
    // As kind does: plain kubectl reaches the new cluster, through a context named after it.
    let kubectlHow = `export KUBECONFIG=${kubeconfig}`;
    if (o.kubeconfigUpdate) {
      const userConfig = userKubeconfigPath();
      try {
        kubectlHow = `kubectl uses the context ${mergeClusterContext(userConfig, name, kubeconfig)} (added to ${userConfig})`;
      } catch (e) {
        console.error(`could not add the cluster to ${userConfig}: ${errorText(e)}`);
      }
    }
    const stopHow = detached ? `skiff down --data-dir ${dataDir} stops it` : 'Ctrl-C stops the cluster';
    console.log(`cluster ready: ${counted} Ready; ${kubectlHow} (${stopHow})${ha}${images}`);
    if (o.dashboard && !stopping) {
      dashboard = await startUpDashboard(kubeconfig, o.dashboardListen, logDir);
      if (dashboard) console.log(`dashboard: ${dashboard.url}`);
    }
    if (!stopping) record({ state: 'ready', ...(dashboard ? { dashboard: dashboard.url } : {}) });

    // In place: etcd started beside the running cluster and raised to the SQLite store's revision,
    // the server stopped in place (its node and pods running on), the store copied, the server
    // started again on etcd, and the other members added one at a time; the agents learn them from
    // default/kubernetes as they do any new member, and HAProxy goes in front of them.
    let converting = false;
    const convertInPlace = async (want: number) => {
      const startedAt = new Date().toISOString();
      writeConversion(dataDir, { state: 'converting', servers: want, startedAt });
      const say = conversionSay(dataDir, (l) => console.log(l));
      const fail = (reason: string) => {
        writeConversion(dataDir, { state: 'failed', servers: want, startedAt, reason });
        say(`the conversion to etcd failed: ${reason}`);
      };
      const first = servers[0]!;
      const added = Array.from({ length: want - 1 }, (_, k) => upMember(dataDir, k + 1, want, true));
      const members = upEtcdMembers(dataDir, want === 1 ? 1 : 3);
      const at = want > 1 && haproxyBin ? { host: '127.0.0.1', port: freeEndpointPort } : undefined;
      let sqliteStopped = 0;
      try {
        const wanted = [...added.map((s) => ({ host: s.host, port })), ...(at ? [at] : []), ...members.flatMap((m) => [m.clientPort, m.peerPort].map((p) => ({ host: m.host, port: p })))];
        for (const w of wanted) {
          const err = await listenError(w.host, w.port);
          if (err) throw new Error(`${w.host}:${w.port} cannot be used: ${errorText(err)}`);
        }
        rmSync(join(dataDir, 'etcd'), { recursive: true, force: true });
        say(`starting etcd (${members.length} member${members.length > 1 ? 's' : ''}; data: ${join(dataDir, 'etcd')})`);
        etcd = await startEtcd({ members: members.length, dir: join(dataDir, 'etcd'), addresses: members, progressNotifyIntervalMs: 1000, startTimeoutMs: 30_000 });
        record();
        await copyUpStoreIntoEtcd({
          dir: dataDir,
          etcdEndpoints: etcd.endpoints,
          token,
          say,
          stopServer: async () => {
            say(`stopping ${first.name} (SQLite) for the copy; every node, its own too, keeps running`);
            first.replacing = true;
            await first.proc?.stop(60_000, RESTART_IN_PLACE_SIGNAL);
            sqliteStopped = Date.now();
          },
        });
      } catch (e) {
        fail(errorText(e));
        await etcd?.destroy();
        etcd = undefined;
        first.replacing = false;
        if (sqliteStopped > 0 && !stopping) {
          say(`starting ${first.name} again on its SQLite store, which the conversion only read`);
          startServer(first);
        }
        record();
        say(notFinishedHint(dataDir, want));
        return;
      }
      storage = 'etcd';
      etcdArgs.push('--etcd-endpoints', etcd.endpoints.join(','));
      endpoint = at;
      endpointUrl = at ? urlOf(at) : undefined;
      first.replacing = false;
      try {
        say(`starting ${first.name} again, on etcd`);
        startServer(first);
        await waitForReady(join(first.dir, 'kubeconfig'), 60_000, undefined, memberUrl(first));
        say(`${first.name} serves again, on etcd, ${((Date.now() - sqliteStopped) / 1000).toFixed(1)} s after it stopped on SQLite`);
        for (const s of added) {
          servers.push(s);
          say(`adding ${s.name} on ${memberUrl(s)}`);
          startServer(s);
          await waitForReady(join(s.dir, 'kubeconfig'), 60_000, undefined, memberUrl(s));
        }
        if (at && endpointUrl && !(await startHaproxy(at, endpointUrl))) throw new Error(`HAProxy on ${endpointUrl} does not answer`);
      } catch (e) {
        // The store is in etcd and a server may have written there: going back to SQLite is the user's call.
        fail(`${errorText(e)}; the cluster runs on etcd without every member; skiff down and then skiff up --data-dir ${dataDir} start it on SQLite again (losing what was written since the copy)`);
        return;
      }
      writeAdminKubeconfig();
      const kept = convertedToEtcd(want, startedAt);
      record({ apiServers: servers.map(memberUrl), endpoint: endpointUrl ?? memberUrl(first) });
      say(
        `the cluster runs on etcd with ${servers.length} API server${servers.length === 1 ? '' : 's'} (${servers.map(memberUrl).join(', ')})${endpointUrl ? `; control-plane endpoint: ${endpointUrl} (HAProxy)` : ''}; ` +
          `its SQLite file is kept as ${kept} (remove it once you no longer want to roll back)`,
      );
    };

    // Every member restarted in place with the endpoint (a serving certificate with its name next to
    // the old ones), one at a time so the others serve meanwhile; then HAProxy moves there and the
    // admin kubeconfig names it. Agents fail over among the members and need nothing of it.
    const moveEndpoint = async (to: { host: string; port: number }) => {
      const startedAt = new Date().toISOString();
      const where = `${to.host}:${to.port}`;
      const url = urlOf(to);
      writeEndpointMove(dataDir, { state: 'moving', startedAt, endpoint: where });
      const say = endpointSay(dataDir, (l) => console.log(l));
      const before = { endpoint, endpointUrl };
      try {
        if (url === endpointUrl) throw new Error(`the cluster is served at ${url} already`);
        const err = await listenError(to.host, to.port);
        if (err) throw new Error(listenErrorMessage(err, 'the control-plane endpoint', 'choose another') ?? `${where} cannot be used: ${errorText(err)}`);
        const previous = endpointUrl;
        endpoint = to;
        endpointUrl = url;
        for (const s of servers) {
          say(`restarting ${s.name} in place with the control-plane endpoint ${where}`);
          s.replacing = true;
          await s.proc?.stop(60_000, RESTART_IN_PLACE_SIGNAL);
          s.replacing = false;
          startServer(s);
          await waitForReady(join(s.dir, 'kubeconfig'), 60_000, undefined, memberUrl(s));
        }
        if (haproxy) {
          say(`stopping HAProxy on ${previous}`);
          const old = haproxy;
          haproxy = undefined;
          await old.stop(5_000);
        }
        if (!(await startHaproxy(to, url))) throw new Error(`HAProxy on ${url} does not answer`);
        writeAdminKubeconfig();
        record({ endpoint: url });
        writeEndpointMove(dataDir, { state: 'done', startedAt, endpoint: where });
        say(`the control-plane endpoint is ${url}: the admin kubeconfig (${kubeconfig}) and every member's names it, and every serving certificate holds ${to.host} next to its earlier names`);
      } catch (e) {
        // The endpoint the cluster is served at stays the one before: members started again later
        // name it, the same move can be asked again, and HAProxy serves it again if it was stopped.
        ({ endpoint, endpointUrl } = before);
        if (!haproxy && endpoint && endpointUrl && !(await startHaproxy(endpoint, endpointUrl))) say(`HAProxy on ${endpointUrl} does not answer either`);
        writeEndpointMove(dataDir, { state: 'failed', startedAt, endpoint: where, reason: errorText(e) });
        say(`moving the control-plane endpoint failed: ${errorText(e)}; the cluster is served at ${endpointUrl ?? 'its members'} as before, and the move can be asked again`);
      }
    };
    onRequest = (req) => {
      if (!req) return;
      if (converting || stopping) return refuseRequest(req, converting ? 'another change is under way' : 'the cluster is stopping');
      if (req.kind === 'convert') {
        if (storage !== 'sqlite' || servers.length !== 1) return refuseRequest(req, 'the cluster does not run on a single SQLite server');
        converting = true;
        void convertInPlace(req.servers).finally(() => (converting = false));
        return;
      }
      if (!haproxyBin) return refuseRequest(req, 'HAProxy is not installed (Debian: apt-get install haproxy; or set SKIFF_HAPROXY_BIN)');
      converting = true;
      void moveEndpoint(req.endpoint).finally(() => (converting = false));
    };
  });
  return cmd;
}

/** One API server of an `up` cluster: where it listens, keeps its data, and which node it is. */
interface UpMember {
  name: string;
  host: string;
  dir: string;
  nodeName: string;
  proc?: ManagedProcess;
  /** Stopped to be started again differently (a conversion): its exit is no failure. */
  replacing?: boolean;
}

/**
 * Member i of n: server-N on 127.0.0.N (one machine, one port), node control-plane-N; a single
 * server, and the first member of a cluster converted from one, keep the single server's names.
 */
function upMember(dataDir: string, i: number, n: number, converted: boolean): UpMember {
  const single = n === 1 || (converted && i === 0);
  return {
    name: single ? 'server' : `server-${i + 1}`,
    host: `127.0.0.${i + 1}`,
    dir: join(dataDir, single ? 'server' : `server-${i + 1}`),
    nodeName: single ? 'control-plane' : `control-plane-${i + 1}`,
  };
}

/**
 * The dashboard, in this process, as the admin kubeconfig's user. A taken port is no reason to stop
 * a cluster that is up: it moves to a free one and says so.
 */
async function startUpDashboard(kubeconfig: string, listen: { host: string; port: number }, logDir: string): Promise<Dashboard | undefined> {
  const log = fileLogger('skiff-dashboard', join(logDir, 'dashboard.log'));
  const start = async (port: number) => {
    const d = new Dashboard({ client: ApiClient.fromKubeconfig(kubeconfig, { timeoutMs: 15_000, userAgent: userAgent('skiff-dashboard') }), clock: systemClock, log, host: listen.host, port });
    try {
      await d.start();
      return d;
    } catch (e) {
      await d.stop();
      throw e;
    }
  };
  try {
    return await start(listen.port);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || listen.port === 0) {
      console.error(`dashboard not started: ${errorText(e)}`);
      return undefined;
    }
    const d = await start(0);
    console.log(`dashboard: ${listen.host}:${listen.port} is in use; serving on another port`);
    return d;
  }
}

/** Whether the node's Ready condition was reported at or after `since` (RFC 3339 has whole seconds). */
function heardSince(n: Node, since: number): boolean {
  const beat = Date.parse(n.status?.conditions?.find((c) => c.type === 'Ready')?.lastHeartbeatTime ?? '');
  return Number.isFinite(beat) && beat >= Math.floor(since / 1000) * 1000;
}

/** Above this many simulated nodes, `up` runs them as one `skiff sim` fleet instead of an agent process each. */
const FLEET_THRESHOLD = 10;

function nodeGroupArg(v: string): AutoscalerGroup {
  try {
    return parseNodesFlag(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message.replace('--nodes', '--node-group'));
  }
}

/** `cpu=8,memory=32Gi,pods=110`: the machines of every node group `up --cloud` makes. */
function instanceTypeArg(v: string): InstanceType {
  const fields = Object.fromEntries(v.split(',').map((kv) => kv.split('=') as [string, string]));
  const pods = Number(fields['pods'] ?? 110);
  if (!fields['cpu'] || !fields['memory'] || !Number.isInteger(pods) || pods < 1) throw new InvalidArgumentError('use cpu=N,memory=Q[,pods=N], e.g. cpu=8,memory=32Gi,pods=110');
  return { name: 'custom', cpu: fields['cpu'], memory: fields['memory'], pods };
}
