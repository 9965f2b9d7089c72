// Pod-side logic without processes: restart back-off, the pod worker's lifecycle on a scripted
// runtime and a FakeClock, pod status shapes as kubectl prints them, and small parsers.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../src/util/clock.js';
import { RestartBackoff } from '../../src/agent/restart-backoff.js';
import { PodWorker, expandVars, shouldRestart, type PodWorkerDeps } from '../../src/agent/pod-worker.js';
import { buildPodStatus, podPhase, statusFingerprint, type ContainerView } from '../../src/agent/pod-status.js';
import { CreateContainerError, type ContainerLaunch, type ExitInfo, type InstanceRecord, type Runtime, type RunningContainer } from '../../src/agent/runtimes/runtime.js';
import { AgentStateDir } from '../../src/agent/state-dir.js';
import { parseLabels, parseTaints } from '../../src/agent/node-object.js';
import { tailOffset } from '../../src/agent/log-server.js';
import { Command } from 'commander';
import { addPassthroughOptions } from '../../src/cli/up.js';
import { generateToken } from '../../src/auth/bootstrap-token.js';
import { agentCommand } from '../../src/cli/agent.js';
import { serverCommand } from '../../src/cli/server.js';
import { podSummary, type Pod } from '../../src/api/kinds/pod.js';
import { captureLogger, tempDir } from './fake-api.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('restart back-off', () => {
  it('restarts at once, then waits 10s, 20s, 40s … capped at 5m, counted from the last exit', () => {
    const clock = new FakeClock();
    const b = new RestartBackoff(clock, 10_000, 300_000);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const finished = clock.now();
      const wait = b.remaining('p/c', finished);
      waits.push(wait);
      clock.advance(wait);
      b.restarted('p/c');
    }
    assert.deepEqual(waits, [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('a container that ran long enough starts over at the base delay', async () => {
    const clock = new FakeClock();
    const b = new RestartBackoff(clock, 10_000, 300_000);
    b.restarted('p/c');
    b.restarted('p/c');
    assert.equal(b.current('p/c'), 20_000);
    await clock.advance(600_001);
    assert.equal(b.remaining('p/c', clock.now()), 0);
    assert.equal(b.current('p/c'), 0);
    b.restarted('p/c');
    assert.equal(b.current('p/c'), 10_000);
  });

  it('shouldRestart follows restartPolicy', () => {
    assert.equal(shouldRestart('Always', 0), true);
    assert.equal(shouldRestart('OnFailure', 0), false);
    assert.equal(shouldRestart('OnFailure', 2), true);
    assert.equal(shouldRestart('Never', 2), false);
  });
});

class ScriptedRuntime implements Runtime {
  readonly name = 'process' as const;
  readonly idScheme = 'skiff-test';
  readonly started: { launch: ContainerLaunch; exit: (info: Partial<ExitInfo>) => void }[] = [];
  constructor(private readonly clock: FakeClock) {}
  async start(l: ContainerLaunch): Promise<RunningContainer> {
    if (l.argv.length === 0) throw new CreateContainerError('CreateContainerConfigError', `container "${l.containerName}" has no command`);
    let resolve!: (i: ExitInfo) => void;
    const exited = new Promise<ExitInfo>((r) => (resolve = r));
    this.started.push({ launch: l, exit: (i) => resolve({ exitCode: 1, reason: 'Error', finishedAt: this.clock.now(), ...i }) });
    return { record: { id: `id${this.started.length}`, pid: 1000 + this.started.length, startedAt: this.clock.now(), logPath: l.logPath }, exited };
  }
  /** What a stopped instance exits with (an app that handles SIGTERM exits 0). */
  stopExitCode = 143;
  async stop(c: RunningContainer): Promise<ExitInfo> {
    this.started.find((s) => s.launch.logPath === c.record.logPath)?.exit({ exitCode: this.stopExitCode, reason: this.stopExitCode === 0 ? 'Completed' : 'Error' });
    return c.exited;
  }
  async adopt(_r: InstanceRecord): Promise<RunningContainer | undefined> {
    return undefined;
  }
  async reapOrphans(): Promise<number> {
    return 0;
  }
  close(): void {}
}

function pod(spec: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
    spec: { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'exit 1'] }], restartPolicy: 'Always', ...spec },
    status: { phase: 'Pending' },
  };
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function workerFor(p: Pod, clock: FakeClock, probeAction?: PodWorkerDeps['probeAction']) {
  const runtime = new ScriptedRuntime(clock);
  const dir = tempDir();
  dirs.push(dir);
  const { log } = captureLogger();
  const state = new AgentStateDir(dir);
  const backoff = new RestartBackoff(clock, 10_000, 300_000);
  let w: PodWorker;
  const deps = {
    runtime,
    clock,
    log,
    state,
    backoff,
    resolveEnv: async () => ({ GREETING: 'hi' }),
    notify: () => w.sync(w.pod),
    event: (_p: Pod, reason: string, message: string) => events.push(`${reason}: ${message}`),
    ...(probeAction ? { probeAction } : {}),
  };
  const events: string[] = [];
  w = new PodWorker(p, deps);
  return { w, runtime, state, events };
}

function printed(w: PodWorker, clock: FakeClock): { ready: string; status: string; restarts: string; phase: string } {
  const snap = w.snapshot();
  const status = buildPodStatus({ pod: w.pod, phase: snap.phase, containers: snap.containers, initContainers: snap.initContainers, initIncomplete: snap.initIncomplete, hostIP: '10.0.0.1', podIP: '10.0.0.1', startTime: w.startTime, now: clock.now() });
  const s = podSummary({ ...w.pod, status }, clock.now());
  return { ...s, restarts: s.restarts.replace(/ \(.*\)$/, ''), phase: snap.phase };
}

describe('pod worker', () => {
  it('runs, crashes, restarts with back-off and shows what kubectl shows', async () => {
    const clock = new FakeClock();
    const { w, runtime } = workerFor(pod(), clock);
    w.sync(w.pod);
    await flush();
    assert.equal(runtime.started.length, 1);
    assert.deepEqual(runtime.started[0]!.launch.argv, ['sh', '-c', 'exit 1']);
    assert.deepEqual(printed(w, clock), { ready: '1/1', status: 'Running', restarts: '0', phase: 'Running' });
    runtime.started[0]!.exit({ exitCode: 1 });
    await flush();
    // First restart is immediate.
    assert.equal(runtime.started.length, 2);
    assert.equal(runtime.started[1]!.launch.instance, 1);
    runtime.started[1]!.exit({ exitCode: 1 });
    await flush();
    assert.equal(runtime.started.length, 2, 'second restart waits');
    assert.deepEqual(printed(w, clock), { ready: '0/1', status: 'CrashLoopBackOff', restarts: '1', phase: 'Running' });
    await clock.advance(9_999);
    await flush();
    assert.equal(runtime.started.length, 2);
    await clock.advance(1);
    await flush();
    assert.equal(runtime.started.length, 3);
    assert.deepEqual(printed(w, clock), { ready: '1/1', status: 'Running', restarts: '2', phase: 'Running' });
    const snap = w.snapshot();
    assert.equal(snap.containers[0]!.lastState.terminated?.exitCode, 1);
  });

  it('probes: an unready container shows 0/1; a failed liveness probe kills it and it restarts', async () => {
    const clock = new FakeClock();
    let ready = false;
    let live = true;
    const spec = { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '1000'], readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 5 }, livenessProbe: { exec: { command: ['live'] }, periodSeconds: 5, failureThreshold: 2 } }] };
    const { w, runtime, events } = workerFor(pod(spec as Partial<NonNullable<Pod['spec']>>), clock, () => async (p) => {
      const ok = p.exec?.command?.[0] === 'ready' ? ready : live;
      return ok ? { ok } : { ok, output: 'nope' };
    });
    w.sync(w.pod);
    await flush();
    await clock.advance(0);
    assert.deepEqual(printed(w, clock), { ready: '0/1', status: 'Running', restarts: '0', phase: 'Running' });
    ready = true;
    await clock.advance(5_000);
    assert.deepEqual(printed(w, clock), { ready: '1/1', status: 'Running', restarts: '0', phase: 'Running' });
    live = false;
    await clock.advance(5_000);
    assert.equal(runtime.started.length, 1, 'one failure is below the threshold');
    await clock.advance(5_000);
    await flush();
    assert.equal(runtime.started.length, 2, 'killed and restarted');
    assert.equal(w.snapshot().containers[0]!.lastState.terminated?.exitCode, 143);
    assert.ok(events.includes('Killing: Container c failed liveness probe, will be restarted'), events.join('\n'));
    assert.ok(events.includes('Unhealthy: Liveness probe failed: nope'));
    assert.deepEqual(printed(w, clock), { ready: '1/1', status: 'Running', restarts: '1', phase: 'Running' }, 'the new instance passed its own readiness probe');
    await w.terminate(0);
  });

  it('a liveness kill is never a success: under OnFailure a container that exits 0 on SIGTERM still restarts', async () => {
    const clock = new FakeClock();
    const spec = { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox', command: ['sleep', '1000'], livenessProbe: { exec: { command: ['live'] }, periodSeconds: 1, failureThreshold: 1 } }] };
    const { w, runtime } = workerFor(pod(spec as Partial<NonNullable<Pod['spec']>>), clock, () => async () => ({ ok: false, output: 'dead' }));
    runtime.stopExitCode = 0;
    w.sync(w.pod);
    await flush();
    await clock.advance(0);
    await flush();
    assert.equal(runtime.started.length, 2, 'killed, then restarted');
    const last = w.snapshot().containers[0]!.lastState.terminated;
    assert.deepEqual([last?.exitCode, last?.reason], [137, 'Error']);
    assert.equal(w.snapshot().phase, 'Running');
    await w.terminate(0);
  });

  it('restartPolicy Never: a failed container makes the pod Failed; OnFailure: exit 0 makes it Succeeded', async () => {
    const clock = new FakeClock();
    const never = workerFor(pod({ restartPolicy: 'Never' }), clock);
    never.w.sync(never.w.pod);
    await flush();
    never.runtime.started[0]!.exit({ exitCode: 3 });
    await flush();
    assert.equal(never.runtime.started.length, 1);
    assert.deepEqual(printed(never.w, clock), { ready: '0/1', status: 'Error', restarts: '0', phase: 'Failed' });
    const onFailure = workerFor(pod({ restartPolicy: 'OnFailure' }), clock);
    onFailure.w.sync(onFailure.w.pod);
    await flush();
    onFailure.runtime.started[0]!.exit({ exitCode: 0, reason: 'Completed' });
    await flush();
    assert.deepEqual(printed(onFailure.w, clock), { ready: '0/1', status: 'Completed', restarts: '0', phase: 'Succeeded' });
  });

  it('a container without a command waits with a clear reason instead of crashing anything', async () => {
    const clock = new FakeClock();
    const { w, runtime } = workerFor(pod({ containers: [{ name: 'web', image: 'nginx' }] }), clock);
    w.sync(w.pod);
    await flush();
    assert.equal(runtime.started.length, 0);
    const snap = w.snapshot();
    assert.equal(snap.containers[0]!.state.waiting?.reason, 'CreateContainerConfigError');
    assert.match(snap.containers[0]!.state.waiting?.message ?? '', /has no command/);
    assert.equal(snap.phase, 'Pending');
  });

  it('runs init containers first, in order', async () => {
    const clock = new FakeClock();
    const { w, runtime } = workerFor(pod({ initContainers: [{ name: 'i1', command: ['true'] }, { name: 'i2', command: ['true'] }] }), clock);
    w.sync(w.pod);
    await flush();
    assert.deepEqual(runtime.started.map((s) => s.launch.containerName), ['i1']);
    assert.equal(printed(w, clock).status, 'Init:0/2');
    runtime.started[0]!.exit({ exitCode: 0, reason: 'Completed' });
    await flush();
    runtime.started[1]!.exit({ exitCode: 0, reason: 'Completed' });
    await flush();
    assert.deepEqual(runtime.started.map((s) => s.launch.containerName), ['i1', 'i2', 'c']);
    assert.equal(printed(w, clock).status, 'Running');
  });

  it('terminate stops every instance and the pod ends terminal', async () => {
    const clock = new FakeClock();
    const { w, runtime } = workerFor(pod(), clock);
    w.sync(w.pod);
    await flush();
    await w.terminate(30_000, { phase: 'Failed', reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.' });
    assert.equal(w.terminated, true);
    w.sync(w.pod);
    await flush();
    assert.equal(runtime.started.length, 1, 'nothing starts after termination');
    const snap = w.snapshot();
    assert.equal(snap.phase, 'Failed');
    assert.equal(snap.reason, 'Terminated');
    assert.equal(snap.containers[0]!.state.terminated?.exitCode, 143);
  });

  it('persists state on transitions so a restarted agent can adopt', async () => {
    const clock = new FakeClock();
    const { w, state } = workerFor(pod(), clock);
    w.sync(w.pod);
    await flush();
    const persisted = state.readPodState<{ containers: Record<string, { current?: { pid?: number } }> }>('uid-1');
    assert.equal(persisted?.containers.c?.current?.pid, 1001);
  });
});

describe('pod status', () => {
  const view = (state: ContainerView['state'], lastState: ContainerView['lastState'] = {}): ContainerView => ({ name: 'c', image: 'i', state, lastState, ready: !!state.running, started: !!state.running, restartCount: 0 });
  it('phase follows upstream getPhase', () => {
    const running = view({ running: {} });
    const waiting = view({ waiting: { reason: 'ContainerCreating' } });
    const crashLoop = view({ waiting: { reason: 'CrashLoopBackOff' } }, { terminated: { exitCode: 1 } });
    const ok = view({ terminated: { exitCode: 0 } });
    const bad = view({ terminated: { exitCode: 1 } });
    assert.equal(podPhase('Always', [running, waiting]), 'Pending');
    assert.equal(podPhase('Always', [running]), 'Running');
    assert.equal(podPhase('Always', [crashLoop]), 'Running');
    assert.equal(podPhase('Never', [ok, ok]), 'Succeeded');
    assert.equal(podPhase('Never', [ok, bad]), 'Failed');
    assert.equal(podPhase('OnFailure', [ok, bad]), 'Running');
    assert.equal(podPhase('Always', [], { pending: true, failed: false }), 'Pending');
  });

  it('keeps conditions others own and transition times of unchanged ones', () => {
    const p = pod();
    p.status = { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' }, { type: 'Ready', status: 'True', lastTransitionTime: '2021-01-01T00:00:00Z' }] };
    const s = buildPodStatus({ pod: p, phase: 'Running', containers: [view({ running: { startedAt: 'x' } })], initContainers: [], initIncomplete: [], hostIP: '1.2.3.4', podIP: '1.2.3.4', startTime: 0, now: Date.UTC(2026, 0, 1) });
    assert.equal(s.conditions!.find((c) => c.type === 'PodScheduled')!.lastTransitionTime, '2020-01-01T00:00:00Z');
    assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime, '2021-01-01T00:00:00Z');
    assert.equal(s.hostIP, '1.2.3.4');
    assert.deepEqual(s.podIPs, [{ ip: '1.2.3.4' }]);
    // Fingerprints ignore time-only churn.
    assert.equal(statusFingerprint(s), statusFingerprint(structuredClone(s)));
  });
});

describe('parsing and helpers', () => {
  it('parses taints and labels as the flags take them', () => {
    assert.deepEqual(parseTaints(['a=b:NoSchedule', 'c:NoExecute']), [{ key: 'a', value: 'b', effect: 'NoSchedule' }, { key: 'c', effect: 'NoExecute' }]);
    assert.throws(() => parseTaints(['a=b']), /invalid taint/);
    assert.throws(() => parseTaints(['a=b:Sometimes']), /invalid taint/);
    assert.deepEqual(parseLabels(['a=1', 'b.io/c=']), { a: '1', 'b.io/c': '' });
    assert.throws(() => parseLabels(['nolabel']), /invalid label/);
  });

  it('expands $(VAR) in command and args', () => {
    assert.equal(expandVars('echo $(A) $(B) $$(A)', { A: '1' }), 'echo 1 $(B) $(A)');
  });

  it('skiff up sends timing flags to whichever process knows them, in any order', () => {
    const cmd = new Command('up').option('--nodes <n>', '', '2').exitOverride();
    const collect = addPassthroughOptions(cmd, serverCommand().options, agentCommand().options);
    cmd.parse(['--node-lease-duration-seconds', '4', '--nodes', '3', '--node-status-update-frequency=1s', '--default-not-ready-toleration-seconds', '10', '--labels', 'a=b', '--labels', 'c=d'], { from: 'user' });
    assert.equal(cmd.opts().nodes, '3');
    const split = collect();
    assert.deepEqual(split.agent, ['--labels', 'a=b', '--labels', 'c=d', '--node-lease-duration-seconds', '4', '--node-status-update-frequency', '1s']);
    // Servers know the node flags too: each runs its own control-plane node.
    assert.deepEqual(split.server, ['--default-not-ready-toleration-seconds', '10', '--labels', 'a=b', '--labels', 'c=d', '--node-lease-duration-seconds', '4', '--node-status-update-frequency', '1s']);
    assert.throws(() => cmd.parse(['--bogus'], { from: 'user' }), /unknown option/);
    assert.match(generateToken(), /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
  });

  it('tailOffset finds where the last N lines start', () => {
    const dir = tempDir();
    dirs.push(dir);
    const f = join(dir, 'log');
    writeFileSync(f, '');
    assert.equal(tailOffset(f, 3), 0);
    appendFileSync(f, 'one\ntwo\nthree\n');
    assert.equal(tailOffset(f, 1), 'one\ntwo\n'.length);
    assert.equal(tailOffset(f, 2), 'one\n'.length);
    assert.equal(tailOffset(f, 5), 0);
    assert.equal(tailOffset(f, 0), 'one\ntwo\nthree\n'.length);
  });
});
