// Bodies a client should never send get a 400 or 422 Status naming the problem, not a 500: a body
// nested deeper than the server walks (JSON and YAML), and a Service whose ports hold a null.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessServer } from '../support/in-process.js';
import { isStatusError } from '../../src/api/errors.js';

test('deeply nested bodies and null list entries are the client\'s error', async () => {
  const srv = await startInProcessServer();
  try {
    const admin = srv.client();
    await admin.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } });
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const nested = (e: unknown) => isStatusError(e, 'BadRequest') && /nested more than 1000 levels deep/.test(e.message);
    await assert.rejects(admin.patch('/api/v1/namespaces/default/configmaps/cm', deep, 'merge'), nested);
    await assert.rejects(admin.patch('/api/v1/namespaces/default/configmaps/cm', deep, 'strategic'), nested);
    await assert.rejects(admin.create('/api/v1/namespaces/default/configmaps', deep), nested);
    // The same in YAML (server-side apply), as a flow of nested lists.
    await assert.rejects(admin.patch('/api/v1/namespaces/default/configmaps/cm', `a: ${'['.repeat(1_500)}${']'.repeat(1_500)}\n`, 'apply', { query: { fieldManager: 't' } }), (e: unknown) => isStatusError(e, 'BadRequest'));
    // Not too deep: still served.
    await admin.patch('/api/v1/namespaces/default/configmaps/cm', { metadata: { labels: { ok: 'yes' } } }, 'merge');

    await assert.rejects(
      admin.create('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type: 'NodePort', ports: [null] } }),
      (e: unknown) => isStatusError(e) && e.status.code >= 400 && e.status.code < 500,
    );
    await assert.rejects(
      admin.create('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: 7 } }),
      (e: unknown) => isStatusError(e) && e.status.code >= 400 && e.status.code < 500,
    );
  } finally {
    await srv.stop();
  }
});
