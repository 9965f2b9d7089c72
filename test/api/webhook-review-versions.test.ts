// The review versions a webhook accepts, one rule for both groups (upstream's
// validateAdmissionReviewVersions and validateConversionReviewVersions): required, DNS-1035
// labels without repeats, at least one this server speaks on create, a stored list kept on update.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { validatingWebhookConfigurationResource } from '../../src/api/kinds/validatingwebhookconfiguration.js';
import { customResourceDefinitionResource } from '../../src/apiextensions/customresourcedefinition.js';

function messages(o: KubeObject, old?: KubeObject): string[] {
  const rt = o.kind === 'CustomResourceDefinition' ? customResourceDefinitionResource : validatingWebhookConfigurationResource;
  rt.defaults(o);
  return rt.validate(o, old).map((c) => `${c.field}: ${c.message}`).filter((m) => m.includes('ReviewVersions'));
}

const webhooks = (versions: string[]): KubeObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: 'w' },
  webhooks: [{ name: 'w.skiff.test', admissionReviewVersions: versions, sideEffects: 'None', clientConfig: { url: 'https://h.example/' } }],
});

const crd = (versions: string[]): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.skiff.test' },
  spec: {
    group: 'skiff.test',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
    ],
    conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: versions, clientConfig: { url: 'https://h.example/' } } },
  },
});

test('admission and conversion review versions: required, DNS labels, no repeats, one this server speaks', () => {
  const w = 'webhooks[0].admissionReviewVersions';
  assert.deepEqual(messages(webhooks([])), [`${w}: Required value: must specify one of v1, v1beta1`]);
  assert.deepEqual(messages(webhooks(['v1', 'v1'])), [`${w}[1]: Invalid value: "v1": duplicate version`]);
  assert.deepEqual(messages(webhooks(['v3'])), [`${w}: Invalid value: ["v3"]: must include at least one of v1, v1beta1`]);
  assert.equal(messages(webhooks(['V1']))[0]?.startsWith(`${w}[0]: Invalid value: "V1": a DNS-1035 label must consist of lower case`), true);
  // An update keeps what is stored, though this server would not accept it now.
  assert.deepEqual(messages(webhooks(['v3']), webhooks(['v3'])), []);
  const c = 'spec.conversion.conversionReviewVersions';
  assert.deepEqual(messages(crd([])), [`${c}: Required value`]);
  assert.deepEqual(messages(crd(['v1', 'v1'])), [`${c}[1]: Invalid value: "v1": duplicate version`]);
  assert.deepEqual(messages(crd(['v3'])), [`${c}: Invalid value: ["v3"]: must include at least one of v1, v1beta1`]);
  assert.deepEqual(messages(crd(['v3']), crd(['v3'])), []);
});
