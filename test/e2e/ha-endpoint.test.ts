// `--control-plane-endpoint` given to a running 3-member cluster (`skiff up --servers 3 --storage
// etcd`, real etcd and HAProxy): every member restarted in place with a serving certificate that
// holds the new address next to its old names, HAProxy moved there, the admin kubeconfig naming
// it; then kubectl with that kubeconfig works through HAProxy after any one member is SIGKILLed.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { describeCertificate } from '../../src/pki/certificates.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { SKIFF_BIN, processesMentioning, runSkiff } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { freePorts, requireEtcdBinary } from '../support/etcd.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-ha-endpoint-'));

describe('--control-plane-endpoint given to a running cluster', () => {
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(dir, { recursive: true, force: true });
  });

  it('reissues serving certificates with the new address, moves HAProxy there, and kubectl through it survives the loss of any member', async () => {
    requireEtcdBinary();
    const [port, newPort] = await freePorts(2);
    const out = join(dir, 'up.out');
    up = startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--servers', '3', '--storage', 'etcd', '--data-dir', dir, '--nodes', '1', '--port', String(port), '--runtime', 'simulated', '--dashboard', 'false', '--kubeconfig-update', 'false', '--node-status-update-frequency=1s'],
      output: out,
    });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 120_000, '"cluster ready"');
    const kubeconfig = join(dir, 'kubeconfig');
    const kubectl = (args: string[]) => run('kubectl', ['--kubeconfig', kubeconfig, ...args]);
    const where = `127.0.0.4:${newPort}`;

    const r = await runSkiff(['up', '--servers', '3', '--storage', 'etcd', '--data-dir', dir, '--control-plane-endpoint', where], { timeoutMs: 240_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^asking the skiff up that runs the cluster \\(pid \\d+\\) to serve it at the control-plane endpoint ${where}; every member restarts in place, one at a time$`, 'm'));
    for (const i of [1, 2, 3]) assert.match(r.stdout, new RegExp(`^restarting server-${i} in place with the control-plane endpoint ${where}$`, 'm'));
    assert.match(r.stdout, new RegExp(`^the control-plane endpoint is https://${where}: `, 'm'));
    assert.equal(parseKubeconfig(readFileSync(kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8')).server, `https://${where}`);
    for (const i of [1, 2, 3]) {
      const member = join(dir, `server-${i}`);
      const hosts = describeCertificate(readFileSync(join(member, 'tls', 'server.crt'), 'utf8')).hosts;
      for (const h of ['127.0.0.4', `127.0.0.${i}`, '127.0.0.1', 'kubernetes.default.svc']) assert.ok(hosts.includes(h), `server-${i}'s certificate names ${h}: ${hosts.join(', ')}`);
      assert.equal(parseKubeconfig(readFileSync(join(member, 'kubeconfig'), 'utf8'), (p) => readFileSync(p, 'utf8')).server, `https://${where}`, `server-${i}'s kubeconfig names the endpoint`);
    }
    assert.match(await kubectl(['get', 'nodes']), /^node-1\s+Ready/m);

    // Any one member SIGKILLed: kubectl through HAProxy goes on; up starts the member again.
    for (const i of [1, 2, 3]) {
      const needle = `${join(dir, `server-${i}`)}\0`;
      const [victim] = processesMentioning(needle);
      assert.ok(victim, `server-${i} runs`);
      process.kill(victim, 'SIGKILL');
      await eventually(() => !processesMentioning(needle).includes(victim), 10_000, `server-${i} gone`);
      assert.match(await kubectl(['get', 'nodes']), /^node-1\s+Ready/m, `kubectl works while server-${i} is down`);
      await kubectl(['create', 'configmap', `while-server-${i}-was-down`, '--from-literal=a=1']);
      await eventually(async () => (await kubectl(['--server', `https://127.0.0.${i}:${port}`, 'get', '--raw', '/readyz'])).trim() === 'ok', 60_000, `server-${i} serving again`);
    }
    assert.equal((await kubectl(['get', 'configmaps', '-o', 'name'])).match(/while-server-\d-was-down/g)?.length, 3);

    up.signal('SIGTERM');
    assert.equal((await up.exited).code, 0);
    up = undefined;
    assert.deepEqual(processesMentioning(dir), [], 'nothing of the cluster left running');
  });
});

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout))),
  );
}
