// A create or update body that is not the URL's kind in the URL's version is refused with the
// message of the step of upstream's decoding that fails.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';

describe('bodies that are not the URL kind', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  before(async () => {
    srv = await startInProcessServer();
    c = srv.client();
  });
  after(async () => srv.stop());

  async function refusal(path: string, body: unknown, contentType = 'application/json'): Promise<string> {
    try {
      await c.request('POST', path, { body: typeof body === 'string' ? Buffer.from(body) : body, contentType });
    } catch (e) {
      assert.ok(isStatusError(e), String(e));
      assert.equal(e.status.code, 400);
      assert.equal(e.status.reason, 'BadRequest');
      return e.status.message ?? '';
    }
    throw new Error('accepted');
  }

  it('a body that does not decode: the object provided is unrecognized, with its first bytes', async () => {
    assert.equal(
      await refusal('/api/v1/namespaces', 'x not json'),
      "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value (78206e6f74206a736f6e)",
    );
    assert.equal(await refusal('/api/v1/namespaces', ''), "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)");
    assert.match(
      await refusal('/api/v1/namespaces', '[1,2]'),
      /^the object provided is unrecognized \(must be of type Namespace\): couldn't get version\/kind; json parse error: json: cannot unmarshal array into Go value of type struct \{ APIVersion string .* \(5b312c325d\)$/,
    );
    assert.equal(
      await refusal('/api/v1/namespaces', '{"metadata": {"name": "x"}, "data": {"a": 1}'),
      'the object provided is unrecognized (must be of type Namespace): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"metadata": {"name": "x"}, "d ...)',
    );
  });

  it("a body cut short or broken inside: encoding/json's words for where its scanner stopped", async () => {
    const cause = async (body: string): Promise<string> => {
      const m = /^the object provided is unrecognized \(must be of type Namespace\): couldn't get version\/kind; json parse error: (.*) \(.*\)$/s.exec(await refusal('/api/v1/namespaces', body));
      assert.ok(m, body);
      return m[1]!;
    };
    assert.equal(await cause('{'), 'unexpected end of JSON input');
    assert.equal(await cause('{"a":"xx'), 'unexpected end of JSON input');
    assert.equal(await cause('{"a":1 "b":2}'), `invalid character '"' after object key:value pair`);
    assert.equal(await cause('{"a" 1}'), "invalid character '1' after object key");
    assert.equal(await cause('{"a":1,}'), "invalid character '}' looking for beginning of object key string");
    assert.equal(await cause('{"a":[1 2]}'), "invalid character '2' after array element");
    assert.equal(await cause('{"a":1}}'), "invalid character '}' after top-level value");
    assert.equal(await cause('{"a":"\\q"}'), "invalid character 'q' in string escape code");
  });

  it('another kind: it does not convert into the URL type; an unknown kind: it is not registered', async () => {
    assert.equal(
      await refusal('/api/v1/namespaces', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      'ConfigMap in version "v1" cannot be handled as a Namespace: converting (v1.ConfigMap) to (core.Namespace): unknown conversion',
    );
    assert.equal(
      await refusal('/api/v1/namespaces', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }),
      'Deployment in version "v1" cannot be handled as a Namespace: converting (v1.Deployment) to (core.Namespace): unknown conversion',
    );
    assert.equal(
      await refusal('/apis/apps/v1/namespaces/default/deployments', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } }),
      'Pod in version "v1" cannot be handled as a Deployment: converting (v1.Pod) to (apps.Deployment): unknown conversion',
    );
    assert.equal(
      await refusal('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Nonsense', metadata: { name: 'x' } }),
      'Nonsense in version "v1" cannot be handled as a Namespace: no kind "Nonsense" is registered for version "v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    );
    assert.equal(
      await refusal('/api/v1/namespaces', { apiVersion: 'v2', metadata: { name: 'x' } }),
      'Namespace in version "v2" cannot be handled as a Namespace: no kind "Namespace" is registered for version "v2" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    );
  });

  it('another version of the URL kind: a served one is refused by the version check alone, custom kinds too', async () => {
    const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    await c.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', kind: 'Gadget' },
          versions: [
            { name: 'v1', served: true, storage: true, schema },
            { name: 'v2', served: true, storage: false, schema },
          ],
        },
      },
    });
    const gadgets = '/apis/example.com/v1/namespaces/default/gadgets';
    await eventually(() => c.get(gadgets).then(() => true, () => false), 10_000, 'gadgets served');
    // Upstream decodes a served version into the hub and converts it; the create handler's
    // version check is what refuses it.
    assert.equal(
      await refusal(gadgets, { apiVersion: 'example.com/v2', kind: 'Gadget', metadata: { name: 'x' } }),
      'the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)',
    );
  });

  it('a body without apiVersion and kind is the URL kind', async () => {
    const ns = await c.request<{ kind: string }>('POST', '/api/v1/namespaces', { body: { metadata: { name: 'typeless' } } });
    assert.equal(ns.kind, 'Namespace');
  });
});
