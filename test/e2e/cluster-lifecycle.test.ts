// Clusters as things a user manages, as with kind, k3d and minikube, against real processes and a
// temporary HOME: `skiff up --detach` returns once ready and leaves the cluster running; `skiff
// status` lists it; its admin context is merged into ~/.kube/config (other contexts and comments
// kept), made current, and two clusters get distinct names; `skiff down` stops it and leaves no
// process; the next `up` brings back the same Nodes and the same pods Running (same uids), with no
// Failed pod left by the restart; SIGHUP to a foreground `up` stops its cluster cleanly; processes
// left by a killed supervisor are named, with the command that stops them, by the next `up` and by
// a port clash; `down --delete` removes the data and the context.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { SKIFF_BIN, containerPids, eventually, processesMentioning, runSkiff } from '../support/cluster.js';
import { yaml } from '../../src/util/lazy-yaml.js';
import type { ClusterStatus } from '../../src/cli/status.js';
import type { ClusterRun } from '../../src/cli/cluster-run.js';

const root = mkdtempSync(join(tmpdir(), 'skiff-lifecycle-'));
const home = join(root, 'home');
// Two projects whose clusters are both `.skiff`: both would be named "app".
const dirA = join(root, 'one', 'app', '.skiff');
const dirB = join(root, 'two', 'app', '.skiff');
const userConfig = join(home, '.kube', 'config');

/** The user's environment: a HOME of its own, no $KUBECONFIG or $XDG_STATE_HOME (so ~/.kube/config and ~/.local/state). */
const USER_ENV: NodeJS.ProcessEnv = { HOME: home, KUBECONFIG: undefined, XDG_STATE_HOME: undefined };
const skiff = (args: string[], timeoutMs?: number) => runSkiff(args, { env: USER_ENV, ...(timeoutMs ? { timeoutMs } : {}) });
/** Plain kubectl, as the user runs it: no --kubeconfig, no $KUBECONFIG. */
const kubectl = (args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile('kubectl', args, { env: { ...process.env, ...USER_ENV }, timeout: 20_000 }, (err, stdout, stderr) => (err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout))),
  );

async function statuses(): Promise<ClusterStatus[]> {
  const r = await skiff(['status', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as ClusterStatus[];
}

interface PodView {
  metadata: { name: string; uid: string };
  status?: { phase?: string; containerStatuses?: { ready?: boolean; restartCount?: number }[] };
}
async function pods(): Promise<PodView[]> {
  return (JSON.parse(await kubectl(['get', 'pods', '-o', 'json'])) as { items: PodView[] }).items;
}
const running = (ps: PodView[]) => ps.filter((p) => p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready));

function config(): { 'current-context': string; contexts: { name: string; context: { cluster: string; user: string } }[]; clusters: { name: string }[]; users: { name: string }[] } {
  return yaml().parse(readFileSync(userConfig, 'utf8')) as ReturnType<typeof config>;
}

const UP = ['--nodes', '1', '--port', '0', '--dashboard=false', '--node-status-update-frequency=1s'];

describe('clusters you start, stop, find and restore', () => {
  let foreground: ManagedProcess | undefined;
  after(async () => {
    foreground?.signal('SIGKILL');
    // Whatever a failed test left: every process of both clusters (pods run as children of neither).
    await skiff(['down', '--data-dir', dirA], 120_000);
    await skiff(['down', '--data-dir', dirB], 120_000);
    for (const pid of [...processesMentioning(root)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(root, { recursive: true, force: true });
  });

  it('up --detach, status, kubeconfig merge, down, and up again with the same Nodes and pods', async () => {
    // The user already has a kubeconfig of their own: it stays, comments and all.
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(userConfig, '# my clusters\napiVersion: v1\nkind: Config\nclusters:\n- name: work\n  cluster:\n    server: https://work.example:6443\nusers:\n- name: me\n  user:\n    token: abc\ncontexts:\n- name: work\n  context:\n    cluster: work\n    user: me\ncurrent-context: work\n');
    mkdirSync(dirA, { recursive: true });
    const up = await skiff(['up', '--detach', '--data-dir', dirA, ...UP], 120_000);
    assert.equal(up.code, 0, up.stderr + up.stdout);
    assert.match(up.stdout, /^cluster ready: 1 control-plane node and 1 node Ready; kubectl uses the context skiff-app \(added to .*\.kube\/config\)/m);
    assert.match(up.stdout, /the cluster runs in the background \(skiff up, pid \d+; .*\): skiff status shows it, skiff down --data-dir .* stops it/);

    // kind's habit: a context named after the cluster, current; the user's own entries kept.
    const c = config();
    assert.equal(c['current-context'], 'skiff-app');
    assert.deepEqual(c.contexts.map((x) => x.name).sort(), ['skiff-app', 'work']);
    assert.deepEqual(c.contexts.find((x) => x.name === 'skiff-app')!.context, { cluster: 'skiff-app', user: 'skiff-app' });
    assert.match(readFileSync(userConfig, 'utf8'), /^# my clusters$/m);
    assert.match(await kubectl(['get', 'nodes']), /^node-1\s+Ready\s/m);

    const [s] = await statuses();
    assert.equal(s?.name, 'app');
    assert.equal(s.dataDir, dirA);
    assert.equal(s.state, 'running');
    assert.equal(s.healthy, true, s.problem);
    assert.equal(s.detached, true);
    assert.deepEqual(s.nodes, [{ name: 'control-plane', ready: true }, { name: 'node-1', ready: true }]);
    assert.deepEqual(s.processes.map((p) => `${p.role} ${p.name}`).sort(), ['agent node-1', 'server server', 'up skiff up']);
    assert.match((await skiff(['status'])).stdout, /^app: running, healthy\n {2}directory: {2}.*\.skiff$/m);

    const manifest = join(root, 'web.yaml');
    writeFileSync(
      manifest,
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n' +
        '    metadata: {labels: {app: web}}\n    spec:\n      terminationGracePeriodSeconds: 2\n      containers: [{name: web, image: x, command: [sleep, "3600"]}]\n',
    );
    await kubectl(['apply', '-f', manifest]);
    await eventually(async () => running(await pods()).length === 3 && (await pods()).length === 3, 30_000, '3 web pods Running');
    const before = (await pods()).map((p) => p.metadata.uid).sort();
    const restarts = async () => new Map((await pods()).map((p) => [p.metadata.uid, p.status?.containerStatuses?.map((c) => c.restartCount ?? 0)]));
    const restartsBefore = await restarts();
    const nodeUids = await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.uid}']);

    // down: the cluster stops and nothing of it runs, not even its pods.
    const down = await skiff(['down', '--data-dir', dirA], 120_000);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /^cluster in .* stopped; skiff up --data-dir .* starts it again$/m);
    assert.deepEqual(processesMentioning(dirA), []);
    for (const uid of before) assert.deepEqual(containerPids(uid), []);
    assert.equal((await statuses())[0]?.state, 'stopped');
    assert.equal(existsSync(join(dirA, 'run.json')), false, 'the run record is kept only while the cluster runs');

    // up again: the same Nodes (never deleted) and the same pods Running, as a k3s restart brings them back.
    const again = await skiff(['up', '--detach', '--data-dir', dirA, ...UP], 120_000);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.equal(await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.uid}']), nodeUids);
    await eventually(async () => running(await pods()).length === 3, 30_000, 'the 3 web pods Running again');
    const after = await pods();
    assert.deepEqual(after.map((p) => p.metadata.uid).sort(), before, 'the same pods, not replacements');
    assert.deepEqual(after.filter((p) => p.status?.phase !== 'Running').map((p) => p.metadata.name), [], 'no Failed pod left by the restart');
    // Started again in the same pods, as after a machine's restart: each container's count one higher.
    assert.deepEqual(await restarts(), new Map([...restartsBefore].map(([uid, counts]) => [uid, counts?.map((n) => n + 1)])));
    for (const uid of before) assert.equal(containerPids(uid).length, 1);
  });

  it('a second cluster gets distinct names; SIGHUP to its foreground up stops it and leaves no process', async () => {
    mkdirSync(dirB, { recursive: true });
    const out = join(root, 'up-b.out');
    foreground = startProcess({ name: 'up-b', command: process.execPath, args: [SKIFF_BIN, 'up', '--data-dir', dirB, ...UP, '--runtime', 'simulated'], env: { ...process.env, ...USER_ENV }, output: out });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 60_000, '"cluster ready"');
    const c = config();
    assert.equal(c['current-context'], 'skiff-app-2');
    assert.deepEqual(c.contexts.map((x) => x.name).sort(), ['skiff-app', 'skiff-app-2', 'work']);
    assert.deepEqual(c.clusters.map((x) => x.name).sort(), ['skiff-app', 'skiff-app-2', 'work']);
    assert.deepEqual(c.users.map((x) => x.name).sort(), ['me', 'skiff-app', 'skiff-app-2']);
    assert.deepEqual((await statuses()).map((s) => `${s.name} ${s.state}`), ['app running', 'app-2 running']);

    // A lost terminal: the supervisor alone gets SIGHUP (its servers and agents have sessions of their own).
    process.kill(foreground.child.pid!, 'SIGHUP');
    const exit = await foreground.exited;
    assert.equal(exit.code, 0);
    assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
    assert.deepEqual(processesMentioning(dirB), [], 'no server or agent left behind');
    foreground = undefined;
  });

  it('names what a killed up left behind, with the command that stops it; down stops it; down --delete removes it all', async () => {
    const run = JSON.parse(readFileSync(join(dirA, 'run.json'), 'utf8')) as ClusterRun;
    const port = new URL(run.apiServers[0]!).port;
    // Its supervisor killed outright: the servers and agents run on, without it.
    process.kill(run.supervisor.pid, 'SIGKILL');
    await eventually(() => !processesMentioning(dirA).includes(run.supervisor.pid), 10_000, 'the supervisor gone');
    assert.equal((await statuses()).find((s) => s.name === 'app')?.state, 'orphaned');

    const second = await skiff(['up', '--data-dir', dirA, ...UP]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, new RegExp(`^skiff up: processes of an earlier skiff up of ${dirA} still run: .*agent node-1 \\(pid \\d+\\).*; skiff down --data-dir ${dirA} stops them`, 'm'));
    // Its port, asked for by another cluster: the advice is to stop the one that holds it.
    const clash = await skiff(['up', '--data-dir', dirB, '--nodes', '1', '--port', port, '--dashboard=false']);
    assert.equal(clash.code, 2);
    assert.match(clash.stderr, new RegExp(`already in use by another process; it is skiff server \\(pid \\d+\\) of the cluster in ${dirA}: skiff down --data-dir ${dirA} stops it; or choose another with --port N`));

    const down = await skiff(['down', '--data-dir', dirA, '--delete'], 120_000);
    assert.equal(down.code, 0, down.stderr);
    // Named as skiff status and up name them.
    assert.match(down.stdout, /^stopping what runs of the cluster in .* without its skiff up: .*agent node-1 \(pid \d+\)/m);
    assert.match(down.stdout, /^removed the context skiff-app from .*\.kube\/config$/m);
    assert.deepEqual(processesMentioning(dirA), []);
    assert.equal(existsSync(dirA), false);
    const c = config();
    assert.deepEqual(c.contexts.map((x) => x.name).sort(), ['skiff-app-2', 'work']);
    assert.deepEqual(c.clusters.map((x) => x.name).sort(), ['skiff-app-2', 'work']);
    assert.deepEqual((await statuses()).map((s) => s.name), ['app-2']);
  });

  it("--kubeconfig-update=false leaves the user's kubeconfig as it is", async () => {
    const before = { text: readFileSync(userConfig, 'utf8'), ino: statSync(userConfig).ino };
    const up = await skiff(['up', '--detach', '--data-dir', dirB, ...UP, '--runtime', 'simulated', '--kubeconfig-update=false'], 120_000);
    try {
      assert.equal(up.code, 0, up.stderr + up.stdout);
      assert.match(up.stdout, /cluster ready: .*; export KUBECONFIG=\S+\/kubeconfig \(/);
      // Not written at all: not even rewritten the same (an atomic write is a new file).
      assert.deepEqual({ text: readFileSync(userConfig, 'utf8'), ino: statSync(userConfig).ino }, before);
    } finally {
      const down = await skiff(['down', '--data-dir', dirB], 120_000);
      assert.equal(down.code, 0, down.stderr);
    }
    assert.deepEqual(processesMentioning(dirB), []);
  });
});
