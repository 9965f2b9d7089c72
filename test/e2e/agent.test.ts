// The node agent end to end: a real `skiff server`, real `skiff agent` processes (joined with a
// bootstrap token, process runtime), real kubectl, real signals. Short timings through flags.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, containerPids, eventually, SKIFF_BIN } from '../support/cluster.js';
import { throughout } from '../support/eventually.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { Lease } from '../../src/api/kinds/lease.js';
import type { KubeList } from '../../src/api/types.js';

function podManifest(name: string, node: string, command: string[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } }, spec: { nodeName: node, terminationGracePeriodSeconds: 5, containers: [{ name: 'c', image: 'busybox', command }], ...extra } });
}

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const LOOP = ['sh', '-c', 'i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.2; done'];

describe('skiff agent end to end', () => {
  const s = new TestServer('agent-e2e');
  let client: ApiClient;
  const agents: TestAgent[] = [];
  const agent = (name: string, dataDir?: string) => {
    const a = new TestAgent(s, name, dataDir);
    agents.push(a);
    return a;
  };
  const getNode = (name: string) => client.get<Node>(`/api/v1/nodes/${name}`);
  const getPod = (name: string) => client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`);
  const runningPod = (name: string) =>
    eventually(async () => {
      const p = await getPod(name);
      return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready === true ? p : undefined;
    }, 15_000, `pod ${name} Running`);

  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN]);
    client = s.client();
  });
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    client?.close();
    await s.stop();
    s.cleanup();
  });

  it('registers a Ready Node (labels, taints, capacity, machine id) and a Lease owned by it', async () => {
    const a = agent('e2e-reg');
    await a.start(['--labels', 'team=blue,tier=web', '--taints', 'dedicated=web:NoSchedule']);
    const node = await getNode('e2e-reg');
    assert.equal(node.metadata.labels?.team, 'blue');
    assert.equal(node.metadata.labels?.['kubernetes.io/hostname'], 'e2e-reg');
    assert.deepEqual(node.spec?.taints, [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }]);
    assert.match(node.metadata.annotations?.['skiff.dev/machine-id'] ?? '', /^[0-9a-f]{32}$/);
    assert.ok(Number(node.status?.capacity?.cpu) >= 1);
    assert.ok((node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0) > 0);
    assert.equal(node.status?.addresses?.find((x) => x.type === 'InternalIP')?.address, '127.0.0.1');
    // The Lease comes from its own loop, next to registration: not necessarily before Ready.
    const lease = await eventually(() => client.get<Lease>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/e2e-reg'), 10_000, 'the Lease of e2e-reg');
    assert.deepEqual(lease.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]), [['Node', 'e2e-reg', node.metadata.uid]]);
    // Renewed every quarter of 4s.
    const first = lease.spec?.renewTime;
    await eventually(async () => (await client.get<Lease>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/e2e-reg')).spec?.renewTime !== first, 5000, 'lease renewal');
    const out = await s.k(['get', 'nodes', 'e2e-reg']);
    assert.match(out, /e2e-reg\s+Ready/);
  });

  it('kubectl delete node: back within 1 s with its labels, taints and cordon; its pod keeps running', async () => {
    const a = agent('e2e-heal');
    await a.start();
    // The node's own events, as a kubelet records them (kubectl describe node shows them).
    await eventually(async () => {
      const out = await s.k(['get', 'events', '--field-selector', 'involvedObject.name=e2e-heal', '-o', 'jsonpath={.items[*].reason}']);
      return ['Starting', 'NodeReady', 'NodeHasSufficientMemory'].every((r) => out.split(' ').includes(r));
    }, 10_000, 'Starting, NodeReady and NodeHasSufficientMemory events');
    await s.k(['apply', '-f', '-'], { input: podManifest('heal-pod', 'e2e-heal', ['sleep', '3600']) });
    const before = await runningPod('heal-pod');
    const pidsBefore = containerPids(before.metadata.uid!);
    assert.equal(pidsBefore.length, 1);
    await s.k(['label', 'node', 'e2e-heal', 'role=db']);
    // A label only an administrator may set (NodeRestriction): restored all the same, as it was set.
    await s.k(['label', 'node', 'e2e-heal', 'node-role.kubernetes.io/db=']);
    await s.k(['taint', 'node', 'e2e-heal', 'maintenance=soon:NoSchedule']);
    await s.k(['cordon', 'e2e-heal']);
    await s.k(['annotate', 'node', 'e2e-heal', 'owner=ops']);
    await eventually(() => existsSync(join(a.dataDir, 'node.json')) && (JSON.parse(readFileSync(join(a.dataDir, 'node.json'), 'utf8')) as { unschedulable?: boolean }).unschedulable === true, 5000, 'observed cordon persisted');
    const beforeDelete = await getNode('e2e-heal');
    const oldUid = beforeDelete.metadata.uid;
    const taintsBefore = (beforeDelete.spec?.taints ?? []).map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`).sort();
    await s.k(['delete', 'node', 'e2e-heal']);
    const deletedAt = Date.now();
    const back = await eventually(async () => {
      try {
        const n = await getNode('e2e-heal');
        return n.metadata.uid !== oldUid ? n : undefined;
      } catch {
        return undefined;
      }
    }, 5000, 'node re-created');
    const restoredMs = Date.now() - deletedAt;
    assert.ok(restoredMs < 1000, `restored after ${restoredMs} ms`);
    assert.equal(back.metadata.labels?.role, 'db');
    assert.equal(back.metadata.labels?.['node-role.kubernetes.io/db'], '');
    assert.match(await s.k(['get', 'node', 'e2e-heal']), /e2e-heal\s+\S+\s+db\s/);
    assert.equal(back.metadata.annotations?.owner, 'ops');
    assert.deepEqual(back.spec?.taints?.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`).sort(), taintsBefore);
    assert.ok(back.spec?.taints?.some((t) => t.key === 'maintenance' && t.value === 'soon'));
    assert.equal(back.spec?.unschedulable, true);
    // The Lease follows the new Node.
    await eventually(async () => {
      const l = await client.get<Lease>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/e2e-heal');
      return l.metadata.ownerReferences?.[0]?.uid === back.metadata.uid;
    }, 5000, 'lease owned by the new node');
    // The pod: same uid, still Running, never restarted, same process.
    const after = await getPod('heal-pod');
    assert.equal(after.metadata.uid, before.metadata.uid);
    assert.equal(after.status?.phase, 'Running');
    assert.equal(after.status?.containerStatuses?.[0]?.restartCount, 0);
    assert.deepEqual(containerPids(before.metadata.uid!), pidsBefore);
    const events = await s.k(['get', 'events', '--field-selector', 'reason=NodeReregistered', '-o', 'name']);
    assert.ok(events.trim().length > 0, 'NodeReregistered event');
    assert.equal(a.logLines('node deleted from the API; re-registering').length, 1);
    assert.equal(a.logLines('node re-registered').length, 1);
    await s.k(['delete', 'pod', 'heal-pod', '--wait=true']);
    await eventually(() => containerPids(before.metadata.uid!).length === 0, 10_000, 'container stopped after pod deletion');
  });

  it('classic mode (--reregister=false): the deleted Node stays gone and errors are logged as upstream', async () => {
    const a = agent('e2e-classic');
    await a.start(['--reregister=false']);
    await s.k(['delete', 'node', 'e2e-classic']);
    await eventually(() => a.logLines('Unable to update node status').length > 0, 10_000, 'classic status error lines');
    assert.ok(a.logLines('Error updating node status, will retry').length >= 5);
    await assert.rejects(getNode('e2e-classic'), (e: { code?: number }) => e.code === 404);
    assert.equal(a.logLines('node re-registered').length, 0);
  });

  it('gives containers the Secrets and ConfigMaps their env names, read with the node credential', async () => {
    const a = agent('e2e-env');
    await a.start();
    await s.k(['create', 'secret', 'generic', 'env-secret', '--from-literal=password=hunter2']);
    await s.k(['create', 'configmap', 'env-config', '--from-literal=mode=fast', '--from-literal=level=3']);
    const env = {
      env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'password' } } }],
      envFrom: [{ configMapRef: { name: 'env-config' }, prefix: 'CFG_' }],
    };
    const manifest = JSON.parse(podManifest('env-pod', 'e2e-env', ['sh', '-c', 'echo "$PASSWORD $CFG_mode $CFG_level"; sleep 60'])) as { spec: { containers: Record<string, unknown>[] } };
    Object.assign(manifest.spec.containers[0]!, env);
    await s.k(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
    await runningPod('env-pod');
    await eventually(async () => (await s.k(['logs', 'env-pod'])).trim() === 'hunter2 fast 3', 10_000, 'env from the Secret and ConfigMap');
    await s.k(['delete', 'pod', 'env-pod', '--grace-period=0', '--force']);
    await a.stop();
  });

  it('kubectl logs shows a pod\'s output (tail, follow, previous)', async () => {
    const a = agent('e2e-logs');
    await a.start();
    await s.k(['apply', '-f', '-'], { input: podManifest('logs-pod', 'e2e-logs', LOOP) });
    await runningPod('logs-pod');
    await eventually(async () => (await s.k(['logs', 'logs-pod'])).includes('line 3'), 10_000, 'log output');
    const tail = await s.k(['logs', 'logs-pod', '--tail', '1']);
    assert.equal(tail.trim().split('\n').length, 1);
    assert.match(tail, /^line \d+\n$/);
    const withC = await s.k(['logs', 'logs-pod', '-c', 'c', '--limit-bytes', '7']);
    assert.equal(withC, 'line 0\n');
    const prev = await s.kubectl(['logs', 'logs-pod', '--previous']);
    assert.notEqual(prev.code, 0);
    assert.match(prev.stderr, /previous terminated container "c" in pod "logs-pod" not found/);
    // follow: lines keep arriving on an open stream.
    const followed = await new Promise<string>((resolve) => {
      let out = '';
      const child = execFile('kubectl', ['--kubeconfig', s.kubeconfig, 'logs', '-f', 'logs-pod', '--tail', '1']);
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.split('\n').length > 4) child.kill();
      });
      child.on('exit', () => resolve(out));
      setTimeout(() => child.kill(), 10_000);
    });
    assert.ok(followed.split('\n').filter(Boolean).length >= 4, `followed: ${followed}`);
    // A crashing container: --previous shows the instance before.
    await s.k(['apply', '-f', '-'], { input: podManifest('crash-pod', 'e2e-logs', ['sh', '-c', 'echo "run $(date +%s%N)"; exit 2']) });
    await eventually(async () => ((await getPod('crash-pod')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2, 15_000, 'restarts');
    const previous = await s.k(['logs', 'crash-pod', '--previous']);
    assert.match(previous, /^run \d+\n$/);
    // Between its short runs (a run caught mid-way shows Running 1/1, as upstream's would).
    await eventually(async () => /crash-pod\s+0\/1\s+(CrashLoopBackOff|Error|Running|ContainerCreating)\s+\d+/.test(await s.k(['get', 'pod', 'crash-pod'])), 10_000, 'crash-pod 0/1 and restarting');
    const missing = await s.kubectl(['logs', 'logs-pod', '-c', 'nope']);
    assert.notEqual(missing.code, 0);
    await s.k(['delete', 'pod', 'logs-pod', 'crash-pod', '--wait=true']);
  });

  it('probes: readiness (httpGet) gates READY, a failing liveness probe (exec) restarts the container', async () => {
    const a = agent('e2e-probes');
    await a.start();
    const dir = mkdtempSync(join(tmpdir(), 'skiff-probe-'));
    const readyFlag = join(dir, 'ready');
    const liveFlag = join(dir, 'live');
    writeFileSync(liveFlag, '');
    const port = await freePort();
    const server = `require('http').createServer((q, r) => { r.writeHead(require('fs').existsSync(${JSON.stringify(readyFlag)}) ? 200 : 503); r.end(); }).listen(${port}, '127.0.0.1')`;
    await s.k(['apply', '-f', '-'], {
      input: podManifest('probed', 'e2e-probes', [process.execPath, '-e', server], { volumes: [{ name: 'scratch', emptyDir: {} }] }).replace(
        '"command"',
        `"ports":[{"name":"http","containerPort":${port}}],"readinessProbe":{"httpGet":{"path":"/ready","port":"http"},"periodSeconds":1},"livenessProbe":{"exec":{"command":["test","-f",${JSON.stringify(liveFlag)}]},"periodSeconds":1,"failureThreshold":2},"command"`,
      ),
    });
    try {
      await eventually(async () => /probed\s+0\/1\s+Running\s+0\s/.test(await s.k(['get', 'pod', 'probed'])), 15_000, 'Running but not ready (503)');
      await eventually(async () => /Readiness probe failed: HTTP probe failed with statuscode: 503/.test(await s.k(['get', 'events', '--field-selector', 'involvedObject.name=probed'])), 10_000, 'Unhealthy event');
      assert.match(await s.k(['get', 'events', '--field-selector', 'involvedObject.name=probed']), /Warning\s+VolumesNotMounted\s+pod\/probed\s+the process runtime runs containers as host processes and mounts no volumes: scratch/);
      writeFileSync(readyFlag, '');
      await eventually(async () => /probed\s+1\/1\s+Running\s+0\s/.test(await s.k(['get', 'pod', 'probed'])), 10_000, 'ready once /ready answers 200');
      rmSync(liveFlag);
      await eventually(async () => ((await getPod('probed')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 15_000, 'restarted after the liveness probe failed twice');
      assert.match(await s.k(['get', 'events', '--field-selector', 'involvedObject.name=probed']), /Container c failed liveness probe, will be restarted/);
    } finally {
      await s.k(['delete', 'pod', 'probed', '--wait=true']);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kubectl create job runs to completion (wait, logs, get); a failing Job stops at its backoffLimit', async () => {
    const a = agent('e2e-jobs');
    await a.start();
    await s.k(['create', 'job', 'hello', '--image=busybox', '--', 'sh', '-c', 'echo hello from a job']);
    await s.k(['wait', '--for=condition=complete', 'job/hello', '--timeout=60s']);
    assert.match(await s.k(['logs', 'job/hello']), /hello from a job/);
    assert.match(await s.k(['get', 'job', 'hello']), /^hello\s+Complete\s+1\/1\s+\S+\s+\S+$/m);
    const boom = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'boom' }, spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'exit 3'] }] } } } };
    await s.k(['apply', '-f', '-'], { input: JSON.stringify(boom) });
    await s.k(['wait', '--for=condition=failed', 'job/boom', '--timeout=60s']);
    assert.match(await s.k(['get', 'job', 'boom']), /^boom\s+Failed\s+0\/1\s/m);
    assert.match(await s.k(['describe', 'job', 'boom']), /BackoffLimitExceeded/);
    // A CronJob, and a Job made from it by hand as kubectl does (`create job --from=cronjob/...`).
    await s.k(['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *', '--', 'sh', '-c', 'echo from the cronjob']);
    assert.match(await s.k(['get', 'cronjob', 'nightly']), /^nightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\S+$/m);
    await s.k(['create', 'job', 'nightly-now', '--from=cronjob/nightly']);
    await s.k(['wait', '--for=condition=complete', 'job/nightly-now', '--timeout=60s']);
    assert.match(await s.k(['logs', 'job/nightly-now']), /from the cronjob/);
    await s.k(['delete', 'job', 'hello', 'boom', 'nightly-now', '--wait=true']);
    await s.k(['delete', 'cronjob', 'nightly', '--wait=true']);
  });

  it('malformed or unrunnable pod specs never crash the agent', async () => {
    const a = agent('e2e-bad');
    await a.start();
    const bad = [
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad-nocmd' }, spec: { nodeName: 'e2e-bad', containers: [{ name: 'c', image: 'nginx' }] } }),
      podManifest('bad-noexec', 'e2e-bad', ['/no/such/binary', '--flag']),
      podManifest('bad-cwd', 'e2e-bad', ['sleep', '1'], {}).replace('"command"', '"workingDir":"/no/such/dir","command"'),
      podManifest('bad-env', 'e2e-bad', ['sleep', '60'], {}).replace('"command"', '"env":[{"name":"X","valueFrom":{"configMapKeyRef":{"name":"missing","key":"k"}}},{"name":"Y","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],"command"'),
      podManifest('bad-args', 'e2e-bad', ['sh', '-c', 'exit 0', '\u00e9\u2603', 'x'.repeat(10_000)]),
      podManifest('good', 'e2e-bad', ['sleep', '3600']),
    ];
    for (const m of bad) await s.k(['apply', '-f', '-'], { input: m });
    await runningPod('good');
    await eventually(async () => {
      const list = await client.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { fieldSelector: 'spec.nodeName=e2e-bad' } });
      const reason = (n: string) => {
        const cs = list.items.find((p) => p.metadata.name === n)?.status?.containerStatuses?.[0];
        return cs?.state?.waiting?.reason ?? cs?.state?.terminated?.reason ?? cs?.lastState?.terminated?.reason;
      };
      return reason('bad-nocmd') === 'CreateContainerConfigError' && ['StartError', 'CrashLoopBackOff'].includes(reason('bad-noexec') ?? '') && reason('bad-env') === 'CreateContainerConfigError' && reason('bad-cwd') !== undefined;
    }, 15_000, 'reasons for unrunnable containers');
    const nocmd = await getPod('bad-nocmd');
    assert.match(nocmd.status?.containerStatuses?.[0]?.state?.waiting?.message ?? '', /has no command/);
    const out = await s.k(['get', 'pods', '--field-selector', 'spec.nodeName=e2e-bad']);
    assert.match(out, /bad-nocmd\s+0\/1\s+CreateContainerConfigError/);
    assert.equal(a.proc!.child.exitCode, null, 'agent still running');
    await s.k(['delete', 'pods', '--field-selector', 'spec.nodeName=e2e-bad', '--wait=true', '--timeout=30s']);
  });

  it('a container that prints without end cannot fill the disk: its log is rotated at --container-log-max-size, --container-log-max-files kept', async () => {
    const a = agent('e2e-flood');
    await a.start(['--container-log-max-size', '64Ki', '--container-log-max-files', '3', '--container-log-monitor-interval', '200ms']);
    // About 1 MB a second: a log manager that did nothing would hold megabytes within seconds.
    await s.k(['apply', '-f', '-'], { input: podManifest('flood', 'e2e-flood', ['sh', '-c', 'while true; do head -c 50000 /dev/zero | tr "\\0" x; echo; sleep 0.05; done']) });
    const pod = await runningPod('flood');
    const dir = join(a.dataDir, 'pods', pod.metadata.uid!, 'logs', 'c');
    // Log files; beside them the agent's marks of when the current one grew (0.log.times), counted in the bytes.
    const all = () => (existsSync(dir) ? readdirSync(dir) : []);
    const files = () => all().filter((f) => /\.log(\.\d+)?$/.test(f));
    const bytes = () => all().reduce((sum, f) => sum + (statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
    await eventually(() => files().includes('0.log.2'), 20_000, `rotated twice (${files().join(', ')})`);
    // Three files of at most 64 KiB plus what arrives between two checks (about 200 KB), for as long as it prints.
    await throughout(() => bytes() < 1_000_000 && files().length <= 3, 3_000, 'the logs staying within three files and a megabyte');
    // A listing taken mid-rotation (older files moved up, the copy not yet written) misses one.
    await eventually(() => files().sort().join() === '0.log,0.log.1,0.log.2', 5_000, `the current log and two rotated ones, no more (${files().join(', ')})`);
    // Just after a rotation the current file may hold nothing yet; the next line lands within 50 ms.
    await eventually(async () => /^x+\n?$/.test(await s.k(['logs', 'flood', '--tail', '1'])), 5_000, 'kubectl logs reading the current file');
    assert.equal(a.proc!.child.exitCode, null, 'agent still running');
    await s.k(['delete', 'pod', 'flood', '--wait=true', '--timeout=30s']);
  });

  it('simulated runtime: capacity from flags, pods Running after the configured delay, no processes', async () => {
    const a = agent('e2e-sim');
    await a.start(['--runtime', 'simulated', '--cpu', '8', '--memory', '16Gi', '--max-pods', '20', '--sim-pod-start-delay', '300ms']);
    const node = await getNode('e2e-sim');
    assert.deepEqual([node.status?.capacity?.cpu, node.status?.capacity?.memory, node.status?.capacity?.pods], ['8', '16Gi', '20']);
    assert.equal(node.status?.nodeInfo?.containerRuntimeVersion, 'skiff-simulated://0.1.0');
    await s.k(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sim-pod' }, spec: { nodeName: 'e2e-sim', containers: [{ name: 'web', image: 'nginx' }] } }) });
    const pod = await runningPod('sim-pod');
    assert.deepEqual(containerPids(pod.metadata.uid!), []);
    assert.match(await s.k(['logs', 'sim-pod']), /simulated container web/);
    await s.k(['delete', 'pod', 'sim-pod', '--wait=true']);
  });

  it('N4: refuses to adopt a live Node registered by another machine', async () => {
    const owner = agent('e2e-owned');
    await owner.start();
    const intruder = agent('e2e-owned', join(s.dataDir, 'agents', 'intruder'));
    await intruder.start([], { waitReady: false });
    // 78: a refusal a restart cannot cure (systemd does not restart it).
    assert.equal(await intruder.exitCode(), 78);
    assert.match(intruder.logs(), /belongs to another machine .* refusing to adopt it/);
    // The owner is unaffected.
    assert.match(await s.k(['get', 'node', 'e2e-owned']), /Ready/);
  });

  it('SIGTERM: cordons, stops pods within their grace period (Failed/Terminated), removes Node and Lease, exits 0', async () => {
    const a = agent('e2e-term');
    await a.start();
    await s.k(['apply', '-f', '-'], { input: podManifest('term-pod', 'e2e-term', ['sleep', '3600']) });
    const pod = await runningPod('term-pod');
    assert.equal(containerPids(pod.metadata.uid!).length, 1);
    a.kill('SIGTERM');
    assert.equal(await a.exitCode(), 0);
    assert.deepEqual(containerPids(pod.metadata.uid!), []);
    const after = await getPod('term-pod');
    assert.equal(after.status?.phase, 'Failed');
    assert.equal(after.status?.reason, 'Terminated');
    assert.ok(after.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True'));
    await assert.rejects(getNode('e2e-term'), (e: { code?: number }) => e.code === 404);
    await assert.rejects(client.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/e2e-term'), (e: { code?: number }) => e.code === 404);
    await s.k(['delete', 'pod', 'term-pod']);
  });

  it('SIGKILL then restart: running containers are adopted, deleted ones killed; no orphans, no duplicates', async () => {
    const a = agent('e2e-kill');
    await a.start();
    await s.k(['apply', '-f', '-'], { input: podManifest('keep-pod', 'e2e-kill', ['sleep', '3600']) });
    await s.k(['apply', '-f', '-'], { input: podManifest('gone-pod', 'e2e-kill', ['sleep', '3600']) });
    const keep = await runningPod('keep-pod');
    const gone = await runningPod('gone-pod');
    const keepPids = containerPids(keep.metadata.uid!);
    const gonePids = containerPids(gone.metadata.uid!);
    assert.equal(keepPids.length, 1);
    assert.equal(gonePids.length, 1);
    a.kill('SIGKILL');
    await a.exitCode();
    // With the agent dead, containers keep running (N11); one pod is force-deleted meanwhile.
    assert.deepEqual(containerPids(keep.metadata.uid!), keepPids);
    await s.k(['delete', 'pod', 'gone-pod', '--force', '--grace-period=0']);
    await a.start();
    await eventually(() => containerPids(gone.metadata.uid!).length === 0, 10_000, 'orphaned container killed');
    assert.deepEqual(containerPids(keep.metadata.uid!), keepPids, 'adopted, not restarted or duplicated');
    const k2 = await getPod('keep-pod');
    assert.equal(k2.status?.containerStatuses?.[0]?.restartCount, 0);
    assert.equal(k2.status?.phase, 'Running');
    await s.k(['delete', 'pod', 'keep-pod', '--wait=true']);
    await eventually(() => containerPids(keep.metadata.uid!).length === 0, 10_000, 'stopped after deletion');
  });

  it('skiff node retire: cordon, evict (honouring a PDB), remove Node and Lease, stay out until --rejoin', async () => {
    const a = agent('e2e-retire');
    await a.start();
    await s.k(['apply', '-f', '-'], { input: podManifest('retire-pod', 'e2e-retire', ['sleep', '3600']) });
    const pod = await runningPod('retire-pod');
    await s.k(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'retire-pdb' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'retire-pod' } } } }),
    });
    const retire = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [SKIFF_BIN, 'node', 'retire', 'e2e-retire', '--kubeconfig', s.kubeconfig], (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr })),
    );
    assert.equal(retire.code, 0, retire.out);
    await eventually(() => a.logLines('eviction blocked by a disruption budget; retrying').length > 0, 10_000, 'eviction blocked by the PDB');
    assert.equal((await getNode('e2e-retire')).spec?.unschedulable, true);
    assert.equal(containerPids(pod.metadata.uid!).length, 1, 'still running while the budget forbids eviction');
    await s.k(['delete', 'pdb', 'retire-pdb']);
    assert.equal(await a.exitCode(), 0);
    assert.deepEqual(containerPids(pod.metadata.uid!), []);
    await assert.rejects(getPod('retire-pod'), (e: { code?: number }) => e.code === 404);
    await assert.rejects(getNode('e2e-retire'), (e: { code?: number }) => e.code === 404);
    await assert.rejects(client.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/e2e-retire'), (e: { code?: number }) => e.code === 404);
    // Stays out: a restart refuses; --rejoin joins again.
    await a.start([], { waitReady: false });
    assert.equal(await a.exitCode(), 78);
    assert.match(a.logs(), /was retired .* --rejoin/);
    await a.start(['--rejoin']);
    assert.equal((await getNode('e2e-retire')).spec?.unschedulable, undefined);
  });
});
