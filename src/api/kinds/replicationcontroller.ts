// core/v1 ReplicationController: the ReplicaSet's predecessor, still what older manifests, Helm
// charts and tools (kubectl scale rc, expose rc) create. Its selector is a plain label map, and it
// may change on update (ReplicaSet's may not).
import { field } from '../errors.js';
import { selectorFromSet } from '../labels.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { nameIsDNSSubdomain, validateMeta, validateNonnegative } from '../validation.js';
import { child, isObject, num, obj, strMap } from './json.js';
import { defaultPodTemplate, type PodTemplateSpec } from './pod.js';
import { formatLabels } from './printing.js';
import { REPLICAS_FIELD_SELECTORS, replicasTable, validatePodTemplateForReplicaSet, type ReplicaSetStatus } from './replicaset.js';

export interface ReplicationControllerSpec {
  replicas?: number;
  minReadySeconds?: number;
  selector?: Record<string, string>;
  template?: PodTemplateSpec;
}

export interface ReplicationController extends KubeObject {
  metadata: ObjectMeta;
  spec?: ReplicationControllerSpec;
  status?: ReplicaSetStatus;
}

/** Upstream SetDefaults_ReplicationController: an empty selector and empty labels come from the template's labels. */
function defaultReplicationController(o: KubeObject): void {
  const spec = child(o, 'spec');
  const template = spec.template;
  const labels = isObject(template) && isObject(template.metadata) && isObject(template.metadata.labels) ? strMap(template.metadata.labels) : undefined;
  if (labels) {
    if (Object.keys(obj(spec.selector)).length === 0) spec.selector = { ...labels };
    if (Object.keys(obj(o.metadata.labels)).length === 0) o.metadata.labels = { ...labels };
  }
  if (typeof spec.replicas !== 'number') spec.replicas = 1;
  defaultPodTemplate(template);
}

function validateReplicationController(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  out.push(...validateNonnegative(num(spec.minReadySeconds), 'spec.minReadySeconds'));
  const selector = strMap(spec.selector);
  if (Object.keys(selector).length === 0) out.push(field.required('spec.selector'));
  out.push(...validateNonnegative(num(spec.replicas), 'spec.replicas'));
  if (!isObject(spec.template)) out.push(field.required('spec.template'));
  else out.push(...validatePodTemplateForReplicaSet(spec.template, selectorFromSet(selector), 'spec.template', 'ReplicationController'));
  return out;
}

export const replicationControllerResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'replicationcontrollers',
  kind: 'ReplicationController',
  listKind: 'ReplicationControllerList',
  singular: 'replicationcontroller',
  namespaced: true,
  shortNames: ['rc'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  fieldSelectors: REPLICAS_FIELD_SELECTORS,
  table: replicasTable((spec) => formatLabels(spec.selector)),
  hasGeneration: true,
  defaults: defaultReplicationController,
  validate: validateReplicationController,
  prepareForCreate: (o) => {
    o.status = { replicas: 0 };
  },
  // core/v1 keeps the pods of an RC deleted without a policy, for compatibility with clients
  // older than garbage collection (upstream's DefaultGarbageCollectionPolicy for v1).
  defaultPropagationPolicy: 'Orphan',
};
