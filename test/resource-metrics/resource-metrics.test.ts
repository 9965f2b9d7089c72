import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpuQuantity, goDuration, memoryQuantity } from '../../src/resource-metrics/quantities.js';
import { SamplePair, usageRate } from '../../src/resource-metrics/usage-rate.js';
import { parseResourceMetrics, resourceMetricsText } from '../../src/resource-metrics/resource-text.js';
import { summaryOf, type UsageReport } from '../../src/resource-metrics/summary.js';
import { simulatedRate, simulatedUsage } from '../../src/resource-metrics/simulated-usage.js';
import { busyCpuNanoseconds, memoryFigures } from '../../src/agent/node-usage.js';

describe('resource metrics: spelling as metrics-server spells it', () => {
  it('CPU as nanocores, canonical: whole millicores and cores lose their zeros', () => {
    assert.equal(cpuQuantity(123456), '123456n');
    assert.equal(cpuQuantity(329087452), '329087452n');
    assert.equal(cpuQuantity(2_000_000), '2m');
    assert.equal(cpuQuantity(1_500_000_000), '1500m');
    assert.equal(cpuQuantity(2_000_000_000), '2');
    assert.equal(cpuQuantity(0), '0');
    assert.equal(cpuQuantity(-5), '0', 'a rate is never negative');
    assert.equal(cpuQuantity(1234.6), '1235n');
  });

  it('memory as a binary quantity: Ki for whole KiB, larger units only when exact', () => {
    assert.equal(memoryQuantity(2748180 * 1024), '2748180Ki');
    assert.equal(memoryQuantity(4096), '4Ki');
    assert.equal(memoryQuantity(16 * 1024 * 1024), '16Mi');
    assert.equal(memoryQuantity(1500), '1500');
    assert.equal(memoryQuantity(0), '0');
  });

  it('a window as Go prints a time.Duration', () => {
    assert.equal(goDuration(15_000), '15s');
    assert.equal(goDuration(20_064), '20.064s');
    assert.equal(goDuration(60_500), '1m0.5s');
    assert.equal(goDuration(3_725_000), '1h2m5s');
    assert.equal(goDuration(250), '250ms');
    assert.equal(goDuration(0.5), '500µs');
    assert.equal(goDuration(0), '0s');
  });
});

describe('resource metrics: rates from cumulative counters', () => {
  const at = (t: number, cpu: number, mem = 1) => ({ timestampMs: t, cpuCoreNanoSeconds: cpu, memoryWorkingSetBytes: mem });

  it('the rate is the counter growth over the time between two samples, with that time as the window', () => {
    assert.deepEqual(usageRate(at(1000, 0), at(16_000, 7_500_000_000, 42)), { timestampMs: 16_000, windowMs: 15_000, nanoCores: 500_000_000, memoryWorkingSetBytes: 42 });
  });

  it('no rate from samples at one instant, or from a counter that went back (a restart)', () => {
    assert.equal(usageRate(at(1000, 5), at(1000, 9)), undefined);
    assert.equal(usageRate(at(1000, 9e9), at(2000, 1e9)), undefined);
  });

  it('keeps the last two samples; a repeated reading is not a new one', () => {
    const p = new SamplePair();
    assert.equal(p.rate(), undefined, 'nothing read yet');
    p.push(at(0, 0));
    assert.equal(p.rate(), undefined, 'one sample is no rate');
    p.push(at(1000, 1e9));
    p.push(at(1000, 1e9));
    assert.equal(p.rate()?.nanoCores, 1e9);
    p.push(at(3000, 2e9));
    assert.deepEqual([p.rate()?.nanoCores, p.rate()?.windowMs], [5e8, 2000]);
  });

  it('a container started after the previous scrape is measured from its start', () => {
    const p = new SamplePair();
    p.push(at(10_000, 2e9));
    assert.equal(p.rate(6_000, 5_000)?.nanoCores, 5e8, 'started at 6 s, scraped before at 5 s: 2 core-seconds over 4 s');
    assert.equal(p.rate(4_000, 5_000), undefined, 'it ran before the last scrape: its counter then is unknown');
  });
});

describe('resource metrics: the summary API and /metrics/resource', () => {
  const report: UsageReport = {
    nodeName: 'n1',
    nodeStartedAtMs: Date.parse('2026-12-01T00:00:00Z'),
    node: { timestampMs: Date.parse('2026-12-01T00:10:00.250Z'), cpuCoreNanoSeconds: 123e9, nanoCores: 3e8, memoryWorkingSetBytes: 2e9, availableBytes: 6e9 },
    pods: [
      {
        name: 'web',
        namespace: 'default',
        uid: 'u1',
        startedAtMs: Date.parse('2026-12-01T00:05:00Z'),
        containers: [
          { name: 'a', startedAtMs: Date.parse('2026-12-01T00:05:01Z'), usage: { timestampMs: Date.parse('2026-12-01T00:10:00.123Z'), cpuCoreNanoSeconds: 1.5e9, nanoCores: 1e8, memoryWorkingSetBytes: 4096 } },
          { name: 'b "quoted"', startedAtMs: Date.parse('2026-12-01T00:05:02Z'), usage: { timestampMs: Date.parse('2026-12-01T00:10:00.124Z'), cpuCoreNanoSeconds: 0.5e9, memoryWorkingSetBytes: 8192 } },
        ],
      },
    ],
  };

  it('the summary carries the kubelet field names; a pod sums its containers, with a rate only when each has one', () => {
    const s = summaryOf(report);
    assert.deepEqual(s.node, {
      nodeName: 'n1',
      startTime: '2026-12-01T00:00:00Z',
      cpu: { time: '2026-12-01T00:10:00Z', usageNanoCores: 300000000, usageCoreNanoSeconds: 123000000000 },
      memory: { time: '2026-12-01T00:10:00Z', availableBytes: 6e9, workingSetBytes: 2e9 },
    });
    const pod = s.pods[0]!;
    assert.deepEqual(pod.podRef, { name: 'web', namespace: 'default', uid: 'u1' });
    assert.equal(pod.cpu.usageCoreNanoSeconds, 2e9);
    assert.equal(pod.cpu.usageNanoCores, undefined);
    assert.equal(pod.memory.workingSetBytes, 12288);
    assert.equal(pod.containers[0]!.cpu.usageNanoCores, 1e8);
  });

  it('/metrics/resource carries timestamps in ms and reads back the same figures', () => {
    const text = resourceMetricsText(report);
    assert.match(text, /^# TYPE container_cpu_usage_seconds_total counter$/m);
    assert.match(text, /^container_cpu_usage_seconds_total\{container="a",namespace="default",pod="web"\} 1\.5 1796083800123$/m);
    assert.match(text, /^node_memory_working_set_bytes 2000000000 1796083800250$/m);
    assert.match(text, /^pod_cpu_usage_seconds_total\{namespace="default",pod="web"\} 2 1796083800124$/m);
    assert.match(text, /^resource_scrape_error 0$/m);
    const back = parseResourceMetrics(text, 0);
    assert.deepEqual(back.node, { timestampMs: 1796083800250, cpuCoreNanoSeconds: 123e9, memoryWorkingSetBytes: 2e9 });
    assert.deepEqual(back.containers, [
      { namespace: 'default', pod: 'web', container: 'a', cpuCoreNanoSeconds: 1.5e9, timestampMs: 1796083800123, memoryWorkingSetBytes: 4096, startedAtMs: Date.parse('2026-12-01T00:05:01Z') },
      { namespace: 'default', pod: 'web', container: 'b "quoted"', cpuCoreNanoSeconds: 0.5e9, timestampMs: 1796083800124, memoryWorkingSetBytes: 8192, startedAtMs: Date.parse('2026-12-01T00:05:02Z') },
    ]);
  });

  it("reads a kubelet's answer: Go's float spelling, samples without a timestamp, series it does not use", () => {
    const kubelet = [
      '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
      'container_cpu_usage_seconds_total{container="coredns",namespace="kube-system",pod="coredns-1"} 12.5 1700000000000',
      'container_memory_working_set_bytes{container="coredns",namespace="kube-system",pod="coredns-1"} 1.2345e+07 1700000000000',
      'container_swap_usage_bytes{container="coredns",namespace="kube-system",pod="coredns-1"} 0 1700000000000',
      'container_cpu_usage_seconds_total{container="half",namespace="x",pod="y"} 1 1700000000000',
      'node_cpu_usage_seconds_total 100.25',
      'node_memory_working_set_bytes 1e9',
      'scrape_error 0',
    ].join('\n');
    const r = parseResourceMetrics(kubelet, 42);
    assert.deepEqual(r.node, { timestampMs: 42, cpuCoreNanoSeconds: 100.25e9, memoryWorkingSetBytes: 1e9 });
    assert.deepEqual(r.containers.map((c) => [c.container, c.cpuCoreNanoSeconds, c.memoryWorkingSetBytes]), [['coredns', 12.5e9, 12345000]], 'a container without memory is left out');
  });
});

describe('resource metrics: simulated figures and the host /proc', () => {
  it('a simulated container uses 30–70 % of its requests, steadily, in whole pages; its counter grows with time', () => {
    const c = { key: 'uid-1/main', requests: { cpu: '500m', memory: '64Mi' }, startedAtMs: 0 };
    const r = simulatedRate(c);
    assert.ok(r.nanoCores >= 150e6 && r.nanoCores <= 350e6, String(r.nanoCores));
    assert.ok(r.memoryBytes >= 0.3 * 64 * 2 ** 20 - 4096 && r.memoryBytes <= 0.7 * 64 * 2 ** 20 + 4096);
    assert.equal(r.memoryBytes % 4096, 0);
    assert.deepEqual(simulatedRate(c), r, 'the same container, the same figures');
    assert.equal(simulatedUsage(c, 10_000).cpuCoreNanoSeconds, Math.round(r.nanoCores * 10));
    assert.ok(simulatedRate({ key: 'x', startedAtMs: 0 }).nanoCores > 0, 'without requests: a little');
  });

  it('the host: busy time of /proc/stat (idle and iowait left out), working set MemTotal - MemAvailable', () => {
    assert.equal(busyCpuNanoseconds('cpu  100 5 50 1000 20 3 2 0 0 0\ncpu0 1 2 3\n'), 160 * 1e7);
    assert.deepEqual(memoryFigures('MemTotal:       8000 kB\nMemFree:        1000 kB\nMemAvailable:   3000 kB\n'), { totalBytes: 8000 * 1024, availableBytes: 3000 * 1024, workingSetBytes: 5000 * 1024 });
  });
});
