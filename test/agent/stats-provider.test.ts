import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { StatsProvider } from '../../src/agent/stats-provider.js';
import type { PodWorker } from '../../src/agent/pod-worker.js';
import type { InstanceUsage, UsageQuery } from '../../src/agent/runtimes/runtime.js';
import { summaryOf } from '../../src/resource-metrics/summary.js';
import { resourceMetricsText } from '../../src/resource-metrics/resource-text.js';
import { SimulatedRuntime } from '../../src/agent/runtimes/simulated.js';

/** A pod worker as the provider sees it: its running instances. */
function worker(name: string, instances: { container: string; id: string; startedAt: number; requests?: Record<string, string> }[]): PodWorker {
  return {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    startTime: 0,
    runningInstances: () => instances.map((i) => ({ container: i.container, record: { id: i.id, startedAt: i.startedAt, logPath: '' }, ...(i.requests ? { spec: { name: i.container, image: 'x', resources: { requests: i.requests } } } : {}) })),
  } as unknown as PodWorker;
}

describe('the agent’s stats provider', () => {
  it('rates from its own readings, at most one reading a second, forgetting ended instances', async () => {
    const clock = new FakeClock(1_000_000);
    let cpu = 0;
    let fail = false;
    let reads = 0;
    let workers = [worker('web', [{ container: 'main', id: 'i1', startedAt: 900_000 }])];
    const runtime = {
      name: 'process' as const,
      async usage(qs: readonly UsageQuery[]): Promise<Map<string, InstanceUsage>> {
        reads++;
        if (fail) throw new Error('runtime down');
        return new Map(qs.map((q) => [q.id, { timestampMs: clock.now(), cpuCoreNanoSeconds: cpu, memoryWorkingSetBytes: 8192 }]));
      },
    };
    const host = (now: number) => ({ timestampMs: now, cpuCoreNanoSeconds: now * 1e6, memoryWorkingSetBytes: 1e9, availableBytes: 3e9 });
    const p = new StatsProvider({ clock, log: silentLogger(), nodeName: 'n1', runtime, workers: () => workers, host });
    const first = await p.read();
    assert.equal(first.report.pods[0]!.containers[0]!.usage.nanoCores, undefined, 'a first reading of a container that ran before has no rate');
    assert.equal(first.report.node.nanoCores, undefined);
    cpu = 1e9;
    clock.advance(500);
    await p.read();
    assert.equal(reads, 1, 'within a second: the same reading');
    clock.advance(1500);
    const second = summaryOf((await p.read()).report);
    assert.equal(second.pods[0]!.containers[0]!.cpu.usageNanoCores, 5e8, '1 core-second over 2 s');
    assert.equal(second.node.cpu.usageNanoCores, 1e9, "the host's counter: one core busy");
    assert.equal(second.node.memory.availableBytes, 3e9);
    workers = [worker('web', [{ container: 'main', id: 'i2', startedAt: clock.now() + 500 }])];
    clock.advance(1000);
    cpu = 5e7;
    const restarted = (await p.read()).report.pods[0]!.containers[0]!.usage;
    assert.equal(restarted.nanoCores, 1e8, 'a new instance started after the previous reading is measured from its start');
    fail = true;
    clock.advance(1000);
    const failed = await p.read();
    assert.equal(failed.error, 'runtime down');
    assert.deepEqual(failed.report.pods, []);
    assert.match(resourceMetricsText(failed.report, true), /^resource_scrape_error 1$/m);
    // A failed reading forgets no container: the next good one still has a rate.
    fail = false;
    cpu = 15e7;
    clock.advance(1000);
    const recovered = (await p.read()).report.pods[0]!.containers[0]!.usage;
    assert.equal(recovered.nanoCores, 5e7, 'measured from the reading before the failed one');
  });

  it('a simulated node: figures from the requests, the node its pods’ plus its own share', async () => {
    const clock = new FakeClock(1_000_000);
    const runtime = new SimulatedRuntime({ clock, startDelayMs: 0, stopDelayMs: 0, writeLogs: false });
    const p = new StatsProvider({ clock, log: silentLogger(), nodeName: 'sim', runtime, workers: () => [worker('w', [{ container: 'c', id: 'i', startedAt: 990_000, requests: { cpu: '1', memory: '1Gi' } }])] });
    await p.read();
    clock.advance(10_000);
    const r = (await p.read()).report;
    const c = r.pods[0]!.containers[0]!.usage;
    assert.ok(c.nanoCores! >= 3e8 && c.nanoCores! <= 7e8, String(c.nanoCores));
    assert.ok(Math.abs(r.node.nanoCores! - (c.nanoCores! + 5e7)) < 1, 'its pod and 50m of its own');
    assert.equal(r.node.memoryWorkingSetBytes, c.memoryWorkingSetBytes + 256 * 2 ** 20);
  });
});
