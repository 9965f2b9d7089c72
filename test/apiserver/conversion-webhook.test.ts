// A conversion webhook's answer, checked as upstream checks it: its uid, its result, how many
// objects and of which apiVersion and kind; of the metadata only labels and annotations are taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConversionWebhook } from '../../src/apiserver/conversion-webhook.js';
import type { WebhookClient } from '../../src/apiserver/webhook/client.js';
import type { ResourceType } from '../../src/api/resource.js';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';

type Answer = (req: { uid: string; desiredAPIVersion: string; objects: KubeObject[] }) => unknown;

function converter(answer: Answer): { conv: ConversionWebhook; calls: number } {
  const state = { calls: 0 };
  const client = {
    post: async (_cc: unknown, body: { request: { uid: string; desiredAPIVersion: string; objects: KubeObject[] } }) => {
      state.calls++;
      return answer(body.request);
    },
  } as unknown as WebhookClient;
  const rt = { group: 'w.test', version: 'v1', kind: 'Widget', storageVersion: 'v2', conversionWebhook: { clientConfig: { url: 'https://x' }, conversionReviewVersions: ['v1'] } } as unknown as ResourceType & { conversionWebhook: NonNullable<ResourceType['conversionWebhook']> };
  const conv = new ConversionWebhook(client, rt);
  return { conv, get calls() { return state.calls; } };
}

const obj = (name: string, apiVersion = 'w.test/v2'): KubeObject => ({ apiVersion, kind: 'Widget', metadata: { name, uid: `uid-${name}`, labels: { a: '1' } }, spec: { n: 1 } });
const ok = (req: { uid: string; desiredAPIVersion: string; objects: KubeObject[] }, map: (o: KubeObject) => KubeObject = (o) => ({ ...o, apiVersion: req.desiredAPIVersion })) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: req.uid, result: { status: 'Success' }, convertedObjects: req.objects.map(map) } });

test('objects already in the version asked for need no call; the others go in one review', async () => {
  const c = converter((req) => ok(req));
  const out = await c.conv.convert([obj('a', 'w.test/v1'), obj('b'), obj('c')], 'w.test/v1');
  assert.deepEqual(out.map((o) => o.apiVersion), ['w.test/v1', 'w.test/v1', 'w.test/v1']);
  assert.equal(c.calls, 1);
  await c.conv.convert([obj('a', 'w.test/v1')], 'w.test/v1');
  assert.equal(c.calls, 1);
});

test('only labels and annotations of the metadata come from the webhook', async () => {
  const c = converter((req) => ok(req, (o) => ({ ...o, apiVersion: req.desiredAPIVersion, metadata: { name: 'renamed', uid: 'other', labels: { b: '2' } } })));
  const [out] = await c.conv.convert([obj('a')], 'w.test/v1');
  assert.deepEqual(out!.metadata, { name: 'a', uid: 'uid-a', labels: { b: '2' } });
});

test('a wrong uid, a failure result, a wrong count or apiVersion fail with upstream texts', async () => {
  const cases: [Answer, RegExp][] = [
    [(req) => ({ response: { uid: 'x', result: { status: 'Success' }, convertedObjects: req.objects } }), /^conversion webhook for w\.test\/v2, Kind=Widget failed: expected response\.uid="[^"]+", got "x"$/],
    [(req) => ({ response: { uid: req.uid, result: { status: 'Failure', message: 'cannot convert' } } }), /failed: cannot convert$/],
    [(req) => ({ response: { uid: req.uid, result: { status: 'Success' }, convertedObjects: [] } }), /returned 0 objects, expected 1$/],
    [(req) => ({ response: { uid: req.uid, result: { status: 'Success' }, convertedObjects: req.objects } }), /returned invalid converted object at index 0: invalid groupVersion \(expected w\.test\/v1, received w\.test\/v2\)$/],
    [() => 'nonsense', /failed: no response provided$/],
  ];
  for (const [answer, message] of cases) {
    await assert.rejects(converter(answer).conv.convert([obj('a')], 'w.test/v1'), (e) => {
      assert.ok(isStatusError(e));
      assert.equal(e.status.code, 500);
      assert.match(e.status.message ?? '', message);
      return true;
    });
  }
});
