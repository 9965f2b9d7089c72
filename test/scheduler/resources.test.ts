import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeAllocatable, podNonZeroRequests, podRequests } from '../../src/scheduler/resources.js';
import { makeNode, makePod } from './fixtures.js';

const c = (name: string, cpu: string, memory: string, restartPolicy?: 'Always') => ({
  name,
  resources: { requests: { cpu, memory } },
  ...(restartPolicy ? { restartPolicy } : {}),
});

describe('scheduler resource requests', () => {
  it('sums containers and takes the larger of that and the biggest init container', () => {
    const pod = makePod('p', { containers: [c('a', '100m', '64Mi'), c('b', '200m', '64Mi')], initContainers: [c('i1', '500m', '32Mi'), c('i2', '100m', '256Mi')] });
    const r = podRequests(pod);
    assert.equal(r.milliCpu, 500);
    assert.equal(r.memory, 256 * 1024 * 1024);
  });

  it('adds sidecars (restartable init containers) to the running pod and to later init containers', () => {
    const pod = makePod('p', { containers: [c('a', '100m', '64Mi')], initContainers: [c('side', '200m', '10Mi', 'Always'), c('init', '250m', '10Mi')] });
    const r = podRequests(pod);
    // Running: 100m + 200m = 300m; init phase: 250m + 200m = 450m.
    assert.equal(r.milliCpu, 450);
  });

  it('adds the runtime overhead', () => {
    const r = podRequests(makePod('p', { cpu: '1', memory: '1Gi', overhead: { cpu: '250m', memory: '120Mi' } }));
    assert.equal(r.milliCpu, 1250);
    assert.equal(r.memory, (1024 + 120) * 1024 * 1024);
  });

  it('counts missing cpu/memory requests at upstream defaults for scoring only', () => {
    const pod = makePod('p');
    assert.equal(podRequests(pod).milliCpu, 0);
    assert.deepEqual(podNonZeroRequests(pod), { milliCpu: 100, memory: 200 * 1024 * 1024 });
    assert.deepEqual(podNonZeroRequests(makePod('q', { cpu: '2' })), { milliCpu: 2000, memory: 200 * 1024 * 1024 });
  });

  it('reads node allocatable, with no pod capacity meaning no pods', () => {
    const a = nodeAllocatable(makeNode('n', { cpu: '3500m', memory: '4Gi', pods: '20' }));
    assert.equal(a.milliCpu, 3500);
    assert.equal(a.memory, 4 * 1024 ** 3);
    assert.equal(a.pods, 20);
    const bare = makeNode('n');
    delete bare.status!.allocatable!.pods;
    assert.equal(nodeAllocatable(bare).pods, 0);
  });
});
