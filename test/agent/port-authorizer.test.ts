import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { PortAuthorizer, nodeSubresource, requestVerb } from '../../src/agent/port-authorizer.js';

describe('the agent port’s authorization of other callers', () => {
  it('maps paths and methods as the kubelet does', () => {
    assert.deepEqual(['/stats/summary', '/stats', '/metrics/resource', '/metrics', '/containerLogs/a/b/c', '/exec/a/b/c', '/statsx'].map(nodeSubresource), ['stats', 'stats', 'metrics', 'metrics', 'proxy', 'proxy', 'proxy']);
    assert.deepEqual(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', undefined].map(requestVerb), ['get', 'get', 'create', 'update', 'patch', 'delete', 'get']);
  });

  it('asks a SubjectAccessReview for the node subresource; keeps an allow 5 minutes and a denial 30 seconds', async () => {
    const clock = new FakeClock();
    const asked: Record<string, unknown>[] = [];
    let allow = false;
    const a = new PortAuthorizer({ clock, nodeName: 'n1', review: async (spec) => (asked.push(spec), { allowed: allow }) });
    const caller = { user: 'prom', groups: ['monitoring'] };
    assert.equal(await a.allowed(caller, 'get', 'metrics'), false);
    assert.deepEqual(asked[0], { user: 'prom', groups: ['monitoring'], resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'metrics', name: 'n1' } });
    allow = true;
    assert.equal(await a.allowed(caller, 'get', 'metrics'), false, 'the denial is kept');
    await clock.advance(30_001);
    assert.equal(await a.allowed(caller, 'get', 'metrics'), true);
    allow = false;
    await clock.advance(4 * 60_000);
    assert.equal(await a.allowed(caller, 'get', 'metrics'), true, 'the allow is kept');
    await clock.advance(60_001);
    assert.equal(await a.allowed(caller, 'get', 'metrics'), false);
    assert.equal(asked.length, 3);
  });

  it('asks once for callers that arrive together (a scrape opening several connections)', async () => {
    let asked = 0;
    let answer: (v: { allowed: boolean }) => void = () => {};
    const a = new PortAuthorizer({ clock: new FakeClock(), nodeName: 'n1', review: () => (asked++, new Promise((r) => (answer = r))) });
    const caller = { user: 'prom', groups: [] };
    const both = Promise.all([a.allowed(caller, 'get', 'metrics'), a.allowed(caller, 'get', 'metrics')]);
    answer({ allowed: true });
    assert.deepEqual(await both, [true, true]);
    assert.equal(asked, 1);
  });

  it('refuses when the API server cannot be asked, and asks again next time', async () => {
    let up = false;
    const a = new PortAuthorizer({ clock: new FakeClock(), nodeName: 'n1', review: async () => { if (!up) throw new Error('down'); return { allowed: true }; } });
    assert.equal(await a.allowed({ user: 'u', groups: [] }, 'get', 'stats'), false);
    up = true;
    assert.equal(await a.allowed({ user: 'u', groups: [] }, 'get', 'stats'), true);
  });
});
