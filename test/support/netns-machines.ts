// Machines simulated as network namespaces on this host, for end-to-end tests and benchmarks of
// networking: each machine is a namespace joined by a veth pair to one bridge here, with its own
// address on that link and a default route through this host's bridge address. What it runs
// (containerd, an agent) is started inside it with nsenter. Only addresses on that bridge and
// inside those namespaces are ever used.
import { execFile } from 'node:child_process';
import net from 'node:net';

export interface NetnsMachine {
  /** The namespace's name (`ip netns`), also the name of its veth end on the bridge. */
  netns: string;
  /** Its address on the link. */
  ip: string;
}

export function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

async function sh(...cmds: string[][]): Promise<void> {
  for (const c of cmds) {
    const r = await run(c[0]!, c.slice(1));
    if (r.code !== 0) throw new Error(`${c.join(' ')}: ${r.stderr}`);
  }
}

/** Removes the namespaces (and with them their links) and the bridge, also what an aborted run left. */
export async function removeMachines(bridge: string, machines: readonly NetnsMachine[]): Promise<void> {
  for (const m of machines) {
    await run('ip', ['netns', 'del', m.netns]);
    await run('ip', ['link', 'del', m.netns]);
  }
  await run('ip', ['link', 'del', bridge]);
}

/** Makes the bridge (with `hostIp`/`prefix` on it) and the machines on it. */
export async function makeMachines(bridge: string, hostIp: string, prefix: number, machines: readonly NetnsMachine[]): Promise<void> {
  await removeMachines(bridge, machines);
  await sh(['ip', 'link', 'add', bridge, 'type', 'bridge'], ['ip', 'addr', 'add', `${hostIp}/${prefix}`, 'dev', bridge], ['ip', 'link', 'set', bridge, 'up']);
  for (const m of machines) {
    await sh(
      ['ip', 'netns', 'add', m.netns],
      ['ip', 'link', 'add', m.netns, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', m.netns],
      ['ip', 'link', 'set', m.netns, 'master', bridge, 'up'],
      ['ip', '-n', m.netns, 'addr', 'add', `${m.ip}/${prefix}`, 'dev', 'eth0'],
      ['ip', '-n', m.netns, 'link', 'set', 'eth0', 'up'],
      ['ip', '-n', m.netns, 'link', 'set', 'lo', 'up'],
      ['ip', '-n', m.netns, 'route', 'add', 'default', 'via', hostIp],
    );
  }
}

/** What a TCP client sees of an HTTP/1.0 GET: the body, 'refused', 'timeout' or 'error CODE'. */
export function httpGet(host: string, port: number, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    let body = '';
    const done = (v: string) => {
      sock.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    sock.on('connect', () => sock.write(`GET / HTTP/1.0\r\nHost: ${host}\r\n\r\n`));
    sock.on('data', (d) => (body += d.toString('utf8')));
    sock.on('end', () => {
      clearTimeout(timer);
      done(body.split('\r\n\r\n')[1]?.trim() ?? body);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done(e.code === 'ECONNREFUSED' ? 'refused' : `error ${e.code}`);
    });
  });
}
