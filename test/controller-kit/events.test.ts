// The event recorder controllers and agents share: repeats aggregate into one Event's count, and
// each object gets 25 writes at once, then one more per 5 minutes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventRecorder, type EventWriter } from '../../src/controller-kit/events.js';
import { EventRecorder as AgentEventRecorder } from '../../src/agent/events.js';
import type { KubeObject } from '../../src/api/types.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';

function fakeWriter() {
  const created: { path: string; body: Record<string, unknown> }[] = [];
  const patched: { path: string; body: Record<string, unknown> }[] = [];
  const writer = {
    create: async (path: string, body: unknown) => {
      created.push({ path, body: body as Record<string, unknown> });
      return body;
    },
    patch: async (path: string, body: unknown) => {
      patched.push({ path, body: body as Record<string, unknown> });
      return body;
    },
  } as unknown as EventWriter;
  return { writer, created, patched };
}

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };

describe('event recorder', () => {
  it('aggregates repeats into a count and drops what exceeds an object\'s budget until it refills', async () => {
    const clock = new FakeClock();
    const { writer, created, patched } = fakeWriter();
    const r = new EventRecorder(writer, { component: 'test' }, clock, silentLogger());
    for (let i = 0; i < 40; i++) await r.record(pod, 'Warning', 'Unhealthy', 'Readiness probe failed: no', 'spec.containers{c}');
    assert.equal(created.length, 1, 'one Event');
    assert.equal(patched.length, 24, '25 writes in the burst, the rest dropped');
    assert.equal(patched.at(-1)!.body.count, 25);
    assert.deepEqual((created[0]!.body.involvedObject as { fieldPath?: string }).fieldPath, 'spec.containers{c}');
    await r.record(pod, 'Normal', 'Killing', 'Container c failed liveness probe, will be restarted');
    assert.equal(created.length, 1, 'the budget is per object, whatever the event');
    await clock.advance(5 * 60_000);
    await r.record(pod, 'Normal', 'Killing', 'Container c failed liveness probe, will be restarted');
    assert.equal(created.length, 2, 'one token back after 5 minutes');
    const other: KubeObject = { ...pod, metadata: { ...pod.metadata, name: 'q', uid: 'u2' } };
    await r.record(other, 'Normal', 'Started', 'Started container c');
    assert.equal(created.length, 3, 'another object has its own budget');
  });

  it('the agent records through it: node events in default with the node name as uid', async () => {
    const clock = new FakeClock();
    const { writer, created, patched } = fakeWriter();
    const agent = new AgentEventRecorder(writer as unknown as ConstructorParameters<typeof AgentEventRecorder>[0], clock, silentLogger(), 'node-1');
    await agent.node('NodeReregistered', 'back');
    await agent.node('NodeReregistered', 'back');
    assert.equal(created.length, 1);
    assert.equal(patched.length, 1);
    assert.equal(created[0]!.path, '/api/v1/namespaces/default/events');
    assert.deepEqual(created[0]!.body.involvedObject, { kind: 'Node', name: 'node-1', uid: 'node-1', apiVersion: 'v1' });
    assert.deepEqual(created[0]!.body.source, { component: 'skiff-agent', host: 'node-1' });
  });
});
