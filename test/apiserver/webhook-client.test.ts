// The webhook client's bound on an answer (docs/reference/api.md: "a bounded answer (10 MiB)"): a
// webhook that answers more fails that call readably instead of filling the server's memory.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookCallError, WebhookClient } from '../../src/apiserver/webhook/client.js';
import { TestWebhookServer } from '../support/webhook-server.js';

const hooks = new TestWebhookServer();
const client = new WebhookClient({ endpoints: { service: async () => undefined, endpoints: async () => undefined, endpointSlices: () => [] } });

before(async () => {
  await hooks.start(['hooks.test.svc']);
  hooks.handlers.set('/small', () => ({ pad: 'x'.repeat(1024) }));
  hooks.handlers.set('/huge', () => ({ pad: 'x'.repeat(10 * 1024 * 1024) }));
});
after(async () => {
  client.close();
  await hooks.stop();
});

test('an answer over 10 MiB fails the call; a small one is read', async () => {
  const cc = (path: string) => ({ url: `https://127.0.0.1:${hooks.port}${path}`, caBundle: hooks.caBundle });
  assert.deepEqual(await client.post(cc('/small'), {}, 10_000), { pad: 'x'.repeat(1024) });
  await assert.rejects(client.post(cc('/huge'), {}, 10_000), (e: Error) => {
    assert.ok(e instanceof WebhookCallError);
    assert.equal(e.message, `Post "https://127.0.0.1:${hooks.port}/huge?timeout=10s": response body larger than ${10 * 1024 * 1024} bytes`);
    return true;
  });
});
