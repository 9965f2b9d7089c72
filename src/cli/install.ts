// `skiff install server|agent [--dry-run] [--root DIR] [flags]` and `skiff uninstall`: a systemd
// unit per role, as k3s installs its own: the flags go into /etc/skiff/<role>.yaml (read with
// --config), the token into /etc/skiff/skiff-<role>.env (0600, never on a command line), the data
// directory under /var/lib/skiff, logs to the journal (`journalctl -u skiff-agent`).
//
// Stopping the unit is the role's graceful exit (an agent drains and removes its Node, N6); a
// failure restarts it; a configuration the agent refuses (retired node, name taken, token refused)
// exits 78 and is not restarted. To restart on a new binary without leaving — an upgrade —
// `systemctl kill --kill-whom=main -s SIGUSR2 skiff-agent`: the agent exits 75 keeping its pods
// and Node, and systemd starts the new one, which adopts them.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { Command, CommanderError, type Option } from 'commander';
import { yaml } from '../util/lazy-yaml.js';
import { agentCommand } from './agent.js';
import { serverCommand } from './server.js';
import { EXIT_CONFIG } from './exit-codes.js';
import { SKIFF_BIN, SERVER_NODE_FLAGS } from '../util/skiff-bin.js';

export type Role = 'server' | 'agent';

export interface InstallPaths {
  unit: string;
  config: string;
  env: string;
}

export function installPaths(root: string, role: Role): InstallPaths {
  return {
    unit: join(root, 'etc/systemd/system', `skiff-${role}.service`),
    config: join(root, 'etc/skiff', `${role}.yaml`),
    env: join(root, 'etc/skiff', `skiff-${role}.env`),
  };
}

/**
 * The flags as the user wrote them, by name (`server: [a, b]` for a repeated flag), after the
 * role's own parser accepted them: a bad flag is refused now, not at the first boot.
 */
export function flagsOf(role: Role, args: string[]): Record<string, string | string[] | boolean> {
  const cmd = role === 'server' ? serverCommand() : agentCommand();
  cmd.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  cmd.action(() => {});
  try {
    cmd.parse(args, { from: 'user' });
  } catch (e) {
    throw new Error(e instanceof CommanderError ? e.message.replace(/^error: /, '') : String(e));
  }
  const byFlag = new Map<string, Option>(cmd.options.flatMap((o) => (o.long ? [[o.long, o] as [string, Option]] : [])));
  const out: Record<string, string | string[] | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    const long = eq > 0 ? arg.slice(0, eq) : arg;
    const opt = byFlag.get(long);
    if (!opt) continue;
    const name = long.slice(2);
    if (opt.isBoolean()) {
      out[name] = true;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i]!;
    const prev = out[name];
    out[name] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [String(prev)]), value];
  }
  return out;
}

const DESCRIPTIONS: Record<Role, string> = {
  server: 'skiff server: API server, controllers and scheduler',
  agent: 'skiff agent: this machine as a node of a skiff cluster',
};

export function renderUnit(role: Role, paths: InstallPaths, root: string, node = process.execPath, bin = SKIFF_BIN): string {
  const inRoot = (p: string) => `/${p.slice(root.length).replace(/^\/+/, '')}`;
  return [
    `# Written by \`skiff install ${role}\`; \`skiff uninstall\` removes it. Flags: ${inRoot(paths.config)}.`,
    '[Unit]',
    `Description=${DESCRIPTIONS[role]}`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `EnvironmentFile=-${inRoot(paths.env)}`,
    `ExecStart=${[node, ...(role === 'server' ? SERVER_NODE_FLAGS : []), bin].join(' ')} ${role} --config ${inRoot(paths.config)}`,
    // Signals go to skiff alone, and its containers (in this unit's cgroup) are never killed by
    // systemd: on stop it ends them itself within their grace periods, and after a crash or a
    // restart in place the next agent adopts them (as k3s runs its agent).
    '# skiff stops its own containers (or leaves them to the next agent on a restart in place): systemd signals skiff alone.',
    'KillMode=process',
    'TimeoutStopSec=120s',
    'Restart=on-failure',
    'RestartSec=5s',
    `RestartPreventExitStatus=${EXIT_CONFIG}`,
    'LimitNOFILE=1048576',
    'TasksMax=infinity',
    'StandardOutput=journal',
    'StandardError=journal',
    `SyslogIdentifier=skiff-${role}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

function systemdRunning(root: string): boolean {
  return resolve(root) === '/' && existsSync('/run/systemd/system');
}

function systemctl(args: string[]): void {
  execFileSync('systemctl', args, { stdio: 'inherit' });
}

function installCommand(): Command {
  return new Command('install')
    .description('install a systemd unit for a server or an agent (flags after the role are its flags)')
    .argument('<role>', 'server or agent')
    .argument('[flags...]', 'flags of `skiff server` or `skiff agent`')
    .option('--dry-run', 'print what would be written, write nothing', false)
    .option('--root <dir>', 'install under this directory instead of / (packaging, tests)', '/')
    .allowUnknownOption()
    .helpOption('-h, --help')
    .action((role: string, _flags: string[], o: { dryRun: boolean; root: string }, cmd: Command) => {
      if (role !== 'server' && role !== 'agent') throw new Error(`the role is server or agent, not ${JSON.stringify(role)}`);
      // Everything after the role that is not install's own flag belongs to the role.
      const raw = cmd.args.slice(1);
      const flags = flagsOf(role, raw);
      const root = resolve(o.root);
      const paths = installPaths(root, role);
      const token = (typeof flags.token === 'string' ? flags.token : undefined) ?? process.env.SKIFF_TOKEN;
      delete flags.token;
      // What the agent would refuse at its first start is refused now.
      if (role === 'agent' && !flags.kubeconfig) {
        if (!flags.server) throw new Error('an agent needs --server https://HOST:PORT (an API server, or the control-plane endpoint)');
        if (!token) throw new Error('an agent joins with --token (or $SKIFF_TOKEN): `skiff token create` on the server makes one');
        if (!flags['ca-file'] && !flags['ca-cert-hash'] && !flags['insecure-skip-ca-verification']) throw new Error('an agent verifies the cluster CA when it joins: pass --ca-file FILE or --ca-cert-hash sha256:HEX');
      }
      flags['data-dir'] ??= `/var/lib/skiff/${role}`;
      // The journal is read by people: text lines (it adds its own time and unit).
      flags['log-format'] ??= 'text';
      const dataDir = join(root, String(flags['data-dir']));
      const files: [string, string, number][] = [
        [paths.config, `# skiff ${role} flags (written by \`skiff install ${role}\`)\n${yaml().stringify(flags)}`, 0o644],
        [paths.unit, renderUnit(role, paths, root), 0o644],
        ...(token ? [[paths.env, `SKIFF_TOKEN=${token}\n`, 0o600] as [string, string, number]] : []),
      ];
      if (o.dryRun) {
        // The token stays off the terminal.
        for (const [path, text, mode] of files) process.stdout.write(`--- ${path} (mode ${mode.toString(8)})\n${path === paths.env ? 'SKIFF_TOKEN=<the token>\n' : text}`);
        process.stdout.write(`--- ${dataDir}/ (directory, mode 700)\n`);
        return;
      }
      // The unit runs this very checkout: it must stay where it is.
      const where = dirname(dirname(SKIFF_BIN));
      if (where.startsWith(tmpdir())) console.warn(`warning: the unit runs skiff from ${where}, a temporary directory; install skiff where it stays (npm install -g ${where}) and run its skiff install`);
      else console.log(`the unit runs skiff from ${where}: keep it there (an upgrade replaces it, then restarts the unit)`);
      for (const [path, text, mode] of files) {
        mkdirSync(dirname(path), { recursive: true });
        // A new file each time (temp + rename): an older one's looser mode never carries over.
        writeFileAtomic(path, text, mode);
        console.log(`wrote ${path}`);
      }
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      console.log(`data directory ${dataDir}`);
      if (systemdRunning(root)) {
        systemctl(['daemon-reload']);
        systemctl(['enable', '--now', `skiff-${role}.service`]);
        console.log(`skiff-${role} is enabled and started; logs: journalctl -u skiff-${role} -f`);
      } else {
        console.log(`systemd is not running here: start it with systemctl daemon-reload && systemctl enable --now skiff-${role} (logs: journalctl -u skiff-${role})`);
      }
    });
}

function uninstallCommand(): Command {
  return new Command('uninstall')
    .description('stop and remove the systemd units `skiff install` wrote (their data stays unless --purge)')
    .option('--root <dir>', 'the directory `skiff install --root` wrote under', '/')
    .option('--purge', 'also remove the data directories', false)
    .action((o: { root: string; purge: boolean }) => {
      const root = resolve(o.root);
      let found = false;
      for (const role of ['agent', 'server'] as const) {
        const paths = installPaths(root, role);
        if (!existsSync(paths.unit)) continue;
        found = true;
        // Stopping is the role's graceful exit: an agent drains and removes its Node first.
        if (systemdRunning(root)) systemctl(['disable', '--now', `skiff-${role}.service`]);
        let dataDir: string | undefined;
        try {
          const cfg = yaml().parse(readFileSync(paths.config, 'utf8')) as Record<string, unknown> | null;
          if (typeof cfg?.['data-dir'] === 'string') dataDir = join(root, cfg['data-dir']);
        } catch {
          // no config: nothing more to find
        }
        for (const f of [paths.unit, paths.config, paths.env]) {
          if (!existsSync(f)) continue;
          rmSync(f);
          console.log(`removed ${f}`);
        }
        if (dataDir && o.purge && existsSync(dataDir)) {
          rmSync(dataDir, { recursive: true, force: true });
          console.log(`removed ${dataDir}`);
        } else if (dataDir) {
          console.log(`kept ${dataDir} (--purge removes it)`);
        }
      }
      if (systemdRunning(root) && found) systemctl(['daemon-reload']);
      if (!found) console.log(`nothing installed under ${root}`);
    });
}

export function installCommands(): Command[] {
  return [installCommand(), uninstallCommand()];
}
