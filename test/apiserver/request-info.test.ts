import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../src/api/errors.js';
import { parseRequestInfo } from '../../src/apiserver/http/request-info.js';

const namespaced = (_g: string, _v: string, r: string) => r !== 'namespaces' && r !== 'nodes';

test('request paths: segments are percent-decoded one by one, plain paths taken as they are', () => {
  const q = new URLSearchParams();
  assert.deepEqual(parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/abc', q, namespaced), {
    kind: 'resource', verb: 'get', group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'abc',
  });
  // An encoded name reaches the handler decoded; an encoded slash stays inside its segment.
  assert.deepEqual(parseRequestInfo('DELETE', '/apis/apps/v1/namespaces/de%66ault/deployments/web%3Ablue', q, namespaced), {
    kind: 'resource', verb: 'delete', group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default', name: 'web:blue',
  });
  const slash = parseRequestInfo('GET', '/api/v1/nodes/a%2Fb', q, namespaced);
  assert.equal(slash.kind === 'resource' && slash.name, 'a/b');
  assert.equal(slash.kind === 'resource' && slash.subresource, undefined);
});

test('a malformed percent escape in a path is a 400, not a server error', () => {
  assert.throws(
    () => parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/a%zz', new URLSearchParams(), namespaced),
    (e: unknown) => isStatusError(e) && e.code === 400 && /invalid URL escape/.test(e.message),
  );
});
