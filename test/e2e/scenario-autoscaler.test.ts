// The autoscaler-zombie scenario end to end, on a local cloud with the cluster autoscaler: upstream
// leaves a machine running without its Node and buys another; skiff restores the Node and buys
// nothing. At --speed 20, so both modes fit well inside the runner's per-file timeout. Also the
// cloud's own faults, from a scenario file a user writes.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesMentioning, runSkiff } from '../support/cluster.js';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: the autoscaler', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cloud-faults-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  scenarioPasses('autoscaler-zombie', ['--speed', '20']);

  it('leaves no machine running once the scenario is over (its autoscaler cannot replace them while they go)', () => {
    assert.deepEqual(processesMentioning('skiff-scenario-autoscaler-zombie-'), []);
  });

  const runFile = async (name: string, yaml: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, `name: ${name}\n${yaml}`);
    const r = await runSkiff(['scenario', 'run', file, '--mode', 'skiff', '--speed', '20'], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
    assert.match(r.stdout, new RegExp(`${name} — skiff mode .*: PASSED`));
    assert.deepEqual(processesMentioning(`skiff-scenario-${name}-`), []);
  };

  it('plays instance-lost: the lost machine\'s Node is deleted, its pods replaced on a machine bought for them', () =>
    runFile(
      'instance-lost',
      `cluster:
  cloud: {min: 2, max: 3, cpu: "1", memory: 4Gi}
workload: {replicas: 4, cpu: 400m}
steps:
  - wait-ready
  - fault: instance-lost
    target: node-1
  - observe: 5m
expect:
  skiff:
    - node-absent: {node: node-1}
    - pods-lost: {node: node-1, min: 2}
    - machines-added: {min: 1}
    - pods-running: {count: 4}
`,
    ));

  it('plays instance-shutdown: the stopped machine\'s Node goes NotReady and stays', () =>
    runFile(
      'instance-shutdown',
      `cluster:
  cloud: {min: 2, max: 2}
steps:
  - wait-ready
  - fault: instance-shutdown
    target: node-2
  - observe: 2m
expect:
  skiff:
    - node-not-ready: {node: node-2}
    - nodes-stay-ready: {nodes: [node-1]}
`,
    ));
});
