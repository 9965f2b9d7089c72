// What a probe does, for containers of the process runtime: exec runs the command as the
// container's own processes run (its env and working directory, on the host); httpGet and
// tcpSocket go to the pod's address, which for host processes is the node's. Results and failure
// texts follow the kubelet's, so `kubectl describe pod` reads the same.
import { errorText } from '../util/error-text.js';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { Container, Probe } from '../api/kinds/pod.js';
import { ProbeNotRun, type ProbeAction, type ProbeOutcome } from './probes.js';
import { AGENT_TAG_ENV } from './runtimes/process.js';

/** The kubelet keeps at most this much of a probe's output. */
const MAX_OUTPUT = 10 * 1024;
const USER_AGENT = 'kube-probe/1.32';

export interface ProbeContext {
  container: Container;
  /** The pod's IP: the default host of httpGet and tcpSocket probes. */
  podIP: string;
  /** The container's environment (resolved as for its start) and working directory. */
  env(): Promise<Record<string, string>>;
  workingDir?: string;
  /** Marks probe processes as this agent's, so a restarted agent reaps any left behind. */
  agentTag: string;
  /** Runs an exec probe's command inside the container (an image runtime); without it, as a host process. */
  exec?(argv: string[], timeoutMs: number): Promise<ProbeOutcome>;
}

export function probeAction(ctx: ProbeContext): ProbeAction {
  return async (probe, timeoutMs) => {
    if (probe.exec) {
      const argv = probe.exec.command ?? [];
      if (ctx.exec) return argv.length > 0 && argv[0] ? ctx.exec(argv, timeoutMs) : { ok: false, output: 'exec probe has no command' };
      return execProbe(ctx, argv, timeoutMs);
    }
    if (probe.httpGet) return httpProbe(ctx, probe, timeoutMs);
    if (probe.tcpSocket) return tcpProbe(ctx, probe.tcpSocket, timeoutMs);
    // grpc probes need a gRPC health client; skiff's process runtime does not run them.
    return { ok: true };
  };
}

/** A numeric port, or a named one looked up in the container's ports. */
export function resolvePort(port: number | string | undefined, c: Container): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

async function execProbe(ctx: ProbeContext, argv: string[], timeoutMs: number): Promise<ProbeOutcome> {
  if (argv.length === 0 || !argv[0]) return { ok: false, output: 'exec probe has no command' };
  let containerEnv: Record<string, string>;
  try {
    containerEnv = await ctx.env();
  } catch (e) {
    // The env comes from the API (ConfigMaps, Secrets) for containers adopted after an agent
    // restart: while it cannot be read the probe did not run, which is not the container failing.
    throw new ProbeNotRun(`cannot resolve the container's environment: ${errorText(e)}`);
  }
  const env = { ...containerEnv, [AGENT_TAG_ENV]: ctx.agentTag };
  return new Promise<ProbeOutcome>((resolve) => {
    let output = '';
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...(ctx.workingDir ? { cwd: ctx.workingDir } : {}) });
    const take = (b: Buffer) => {
      if (output.length < MAX_OUTPUT) output += b.toString('utf8').slice(0, MAX_OUTPUT - output.length);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      resolve({ ok: false, output: `command ${JSON.stringify(argv.join(' '))} timed out` });
    }, timeoutMs);
    child.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, output: e.code === 'ENOENT' ? `exec: "${argv[0]}": executable file not found in $PATH` : e.message });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ ok: true });
      else resolve({ ok: false, output: output.trim() || (signal ? `command terminated by signal ${signal}` : `command exited with code ${code}`) });
    });
  });
}

function dialError(host: string, port: number, e: NodeJS.ErrnoException): string {
  if (e.code === 'ECONNREFUSED') return `dial tcp ${host}:${port}: connect: connection refused`;
  if (e.code === 'EHOSTUNREACH') return `dial tcp ${host}:${port}: connect: no route to host`;
  return `dial tcp ${host}:${port}: ${e.message}`;
}

function httpProbe(ctx: ProbeContext, probe: Probe, timeoutMs: number): Promise<ProbeOutcome> {
  const h = probe.httpGet!;
  const port = resolvePort(h.port, ctx.container);
  if (port === undefined) return Promise.resolve({ ok: false, output: `unable to find port ${JSON.stringify(h.port)} in container ${ctx.container.name}` });
  const host = h.host || ctx.podIP;
  const https = (h.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const path = h.path ? (h.path.startsWith('/') ? h.path : `/${h.path}`) : '/';
  const url = `${https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  const headers: Record<string, string> = { 'User-Agent': USER_AGENT, Accept: '*/*' };
  for (const hh of h.httpHeaders ?? []) if (hh?.name) headers[hh.name] = hh.value ?? '';
  return new Promise<ProbeOutcome>((resolve) => {
    const done = (o: ProbeOutcome) => {
      clearTimeout(timer);
      resolve(o);
    };
    // The kubelet does not verify a probed container's certificate.
    const req = (https ? httpsRequest : httpRequest)(url, { method: 'GET', headers, ...(https ? { rejectUnauthorized: false } : {}) }, (res) => {
      const code = res.statusCode ?? 0;
      res.resume();
      res.once('error', () => undefined);
      done(code >= 200 && code < 400 ? { ok: true } : { ok: false, output: `HTTP probe failed with statuscode: ${code}` });
      req.destroy();
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, output: `Get ${JSON.stringify(url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    }, timeoutMs);
    req.once('error', (e: NodeJS.ErrnoException) => done({ ok: false, output: `Get ${JSON.stringify(url)}: ${dialError(host, port, e)}` }));
    req.end();
  });
}

function tcpProbe(ctx: ProbeContext, t: NonNullable<Probe['tcpSocket']>, timeoutMs: number): Promise<ProbeOutcome> {
  const port = resolvePort(t.port, ctx.container);
  if (port === undefined) return Promise.resolve({ ok: false, output: `unable to find port ${JSON.stringify(t.port)} in container ${ctx.container.name}` });
  const host = t.host || ctx.podIP;
  return new Promise<ProbeOutcome>((resolve) => {
    const socket = connect({ host, port });
    const done = (o: ProbeOutcome) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => done({ ok: false, output: `dial tcp ${host}:${port}: i/o timeout` }), timeoutMs);
    socket.once('connect', () => done({ ok: true }));
    socket.once('error', (e: NodeJS.ErrnoException) => done({ ok: false, output: dialError(host, port, e) }));
  });
}
