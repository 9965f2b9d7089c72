// `skiff agent`: one node agent (registration, Lease heartbeats, self-healing Node, pod sync).
import { Command, InvalidArgumentError, Option } from 'commander';
import { createLogger, defaultLogFormat, type LogFormat } from '../util/log.js';
import { Agent, RetiredError, type AgentConfig } from '../agent/agent.js';
import { NodeNameTakenError } from '../agent/registration.js';
import { JoinError } from '../agent/join.js';
import { addConfigFile, listenErrorMessage, logFormatOption, boolArg } from './options.js';
import { nodeConfigFrom, nodeOptions } from './node-options.js';
import { PidLock } from '../util/pid-lock.js';
import { parseToken } from '../auth/bootstrap-token.js';
import { EXIT_CONFIG, EXIT_RESTART } from './exit-codes.js';
import { CLUSTER_STOP_SIGNAL, LEAVE_SIGNALS, RESTART_IN_PLACE_SIGNAL } from '../util/stop-signals.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** A repeatable --server: each an https URL (a bare host would only fail, over and over, at the first request). */
export function serverArg(value: string, previous: string[] = []): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`${JSON.stringify(value)} is not a URL: use https://HOST:PORT`);
  }
  if (url.protocol !== 'https:') throw new InvalidArgumentError(`${JSON.stringify(value)}: API servers speak https: use https://HOST:PORT`);
  return [...previous, value];
}

function tokenArg(value: string): string {
  // An empty $SKIFF_TOKEN is no token.
  if (value !== '' && !parseToken(value)) throw new InvalidArgumentError('a bootstrap token looks like abcdef.0123456789abcdef ([a-z0-9]{6}.[a-z0-9]{16}); `skiff token create` makes one');
  return value;
}

function hashArg(value: string): string {
  if (!/^sha256:[0-9a-fA-F]{64}$/.test(value)) throw new InvalidArgumentError('use sha256:<64 hex characters>');
  return value;
}

export function agentCommand(): Command {
  const cmd = new Command('agent')
    .description('run a node agent: registers a Node and its Lease, keeps the Node alive in the API, runs its pods')
    .option('--server <url>', 'API server URL (repeatable; the agent fails over among them)', serverArg, [])
    .addOption(new Option('--token <token>', 'bootstrap token to join with, needed once while the data dir has no node credential').env('SKIFF_TOKEN').argParser(tokenArg))
    .option('--ca-file <path>', 'cluster CA certificate to trust when joining')
    .option('--ca-cert-hash <sha256:hex>', 'sha256 of the cluster CA certificate (DER) to verify it when joining', hashArg)
    .option('--insecure-skip-ca-verification', 'join without verifying the cluster CA (unsafe)', false)
    .option('--tls-bootstrap', "join as a kubelet's TLS bootstrap does: post a CertificateSigningRequest with the token and wait for it to be approved (by the csrapproving controller) and issued, instead of skiff's one-step /skiff/v1/join", false)
    .option('--kubeconfig <file>', 'use this kubeconfig\'s credentials instead of joining with a token')
    .option('--data-dir <dir>', 'agent state: node credential, server list, last observed Node, pod state and logs', '.skiff/agent')
    .option('--endpoint-discovery <bool>', 'learn every API server from default/kubernetes Endpoints, keep the list in the data dir, health-check them and fail over within 2 s (false = upstream single-address behaviour)', boolArg, true)
    .option('--rejoin', 'join again after `skiff node retire` (the data dir remembers the retirement)', false);
  for (const opt of nodeOptions()) cmd.addOption(opt);
  cmd.addOption(logFormatOption());
  addConfigFile(cmd);
  cmd.action(async (o: Record<string, unknown>) => {
    const log = createLogger('skiff-agent', (o.logFormat as LogFormat | undefined) ?? defaultLogFormat());
    let cfg: AgentConfig;
    try {
      const credentials: AgentConfig['credentials'] = o.kubeconfig
        ? { kind: 'kubeconfig', path: o.kubeconfig as string }
        : {
            kind: 'token',
            ...(o.token ? { token: o.token as string } : {}),
            ...(o.caFile ? { caFile: o.caFile as string } : {}),
            ...(o.caCertHash ? { caCertHash: o.caCertHash as string } : {}),
            ...(o.insecureSkipCaVerification ? { insecureSkipCaVerification: true } : {}),
            ...(o.tlsBootstrap ? { tlsBootstrap: true } : {}),
          };
      cfg = {
        ...nodeConfigFrom(o),
        dataDir: o.dataDir as string,
        servers: o.server as string[],
        credentials,
        endpointDiscovery: o.endpointDiscovery as boolean,
        rejoin: o.rejoin === true,
      };
    } catch (e) {
      console.error(`skiff agent: ${(e as Error).message}`);
      process.exit(2);
    }
    // A stray rejection in one pod's handling must never take the node down.
    process.on('unhandledRejection', (e) => log.error({ err: e instanceof Error ? e.stack ?? e.message : String(e) }, 'unhandled rejection (ignored)'));
    try {
      // Two agents on one data dir would be one node twice, each stopping the other's pods.
      mkdirSync(cfg.dataDir, { recursive: true, mode: 0o700 });
      PidLock.acquire(join(cfg.dataDir, 'agent.lock'), `the agent data dir ${cfg.dataDir}`);
    } catch (e) {
      console.error(`skiff agent: ${(e as Error).message}`);
      process.exit(2);
    }
    const agent = new Agent(cfg, log);
    let signals = 0;
    const onSignal = (sig: string) => {
      if (++signals > 1) {
        log.warn({ signal: sig }, 'second signal: exiting now');
        process.exit(1);
      }
      void (sig === RESTART_IN_PLACE_SIGNAL ? agent.restartInPlace() : sig === CLUSTER_STOP_SIGNAL ? agent.powerOff() : agent.shutdown(sig));
    };
    for (const sig of LEAVE_SIGNALS) process.on(sig, () => onSignal(sig));
    // An upgrade: stop, keeping the pods and the Node for the agent started next.
    process.on(RESTART_IN_PLACE_SIGNAL, () => onSignal(RESTART_IN_PLACE_SIGNAL));
    // The whole cluster stops (skiff down): keep the Node and the pods for the next start.
    process.on(CLUSTER_STOP_SIGNAL, () => onSignal(CLUSTER_STOP_SIGNAL));
    try {
      await agent.start();
    } catch (e) {
      const known = e instanceof NodeNameTakenError || e instanceof RetiredError || e instanceof JoinError;
      if (signals > 0) {
        process.exit((await agent.ended) === 'restarting' ? EXIT_RESTART : 0);
      }
      const listenError = listenErrorMessage(e, "the node's log server", 'choose another with --kubelet-port N (0: any free port)');
      log.error({ err: listenError ?? (known ? (e as Error).message : (e as Error).stack) }, 'agent failed to start');
      console.error(`skiff agent: ${listenError ?? (e as Error).message}`);
      // A refusal a restart cannot cure is not retried by systemd (RestartPreventExitStatus).
      process.exit(known && !(e instanceof JoinError && !e.fatal) ? EXIT_CONFIG : 1);
    }
    const end = await agent.ended;
    process.exit(end === 'restarting' ? EXIT_RESTART : 0);
  });
  return cmd;
}
