// admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration: webhooks the API server asks,
// after the kind's own validation, whether a write may go on (the ValidatingAdmissionWebhook
// plugin calls them: src/apiserver/admission/validating-webhook.ts).
import type { ResourceType } from '../resource.js';
import { ADMISSIONREGISTRATION_GROUP, defaultWebhookConfiguration, matchConditionWarnings, validateWebhookConfiguration, webhookConfigurationTable } from './admission-webhook.js';

export const validatingWebhookConfigurationResource: ResourceType = {
  group: ADMISSIONREGISTRATION_GROUP,
  version: 'v1',
  resource: 'validatingwebhookconfigurations',
  kind: 'ValidatingWebhookConfiguration',
  listKind: 'ValidatingWebhookConfigurationList',
  singular: 'validatingwebhookconfiguration',
  namespaced: false,
  shortNames: [],
  categories: ['api-extensions'],
  subresources: [],
  fieldSelectors: {},
  table: webhookConfigurationTable,
  hasGeneration: true,
  defaults: (o) => defaultWebhookConfiguration(o, false),
  validate: (o, old) => validateWebhookConfiguration(o, old, false),
  warningsFor: matchConditionWarnings,
};
