// admissionregistration.k8s.io/v1 MutatingWebhookConfiguration: webhooks that may change a write
// before the kind's own validation, with JSON patches (the MutatingAdmissionWebhook plugin calls
// them: src/apiserver/admission/mutating-webhook.ts).
import type { ResourceType } from '../resource.js';
import { ADMISSIONREGISTRATION_GROUP, defaultWebhookConfiguration, matchConditionWarnings, validateWebhookConfiguration, webhookConfigurationTable } from './admission-webhook.js';

export const mutatingWebhookConfigurationResource: ResourceType = {
  group: ADMISSIONREGISTRATION_GROUP,
  version: 'v1',
  resource: 'mutatingwebhookconfigurations',
  kind: 'MutatingWebhookConfiguration',
  listKind: 'MutatingWebhookConfigurationList',
  singular: 'mutatingwebhookconfiguration',
  namespaced: false,
  shortNames: [],
  categories: ['api-extensions'],
  subresources: [],
  fieldSelectors: {},
  table: webhookConfigurationTable,
  hasGeneration: true,
  defaults: (o) => defaultWebhookConfiguration(o, true),
  validate: (o, old) => validateWebhookConfiguration(o, old, true),
  warningsFor: matchConditionWarnings,
};
