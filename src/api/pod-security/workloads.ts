// Where the pod is in each kind Pod Security looks at: a pod itself, or the template of a pod
// controller (upstream's DefaultPodSpecExtractor: these nine built-in resources, nothing custom).
import { isObject, strMap, type JsonObject } from '../kinds/json.js';
import type { KubeObject } from '../types.js';
import type { PodParts } from './check.js';

type TemplatePath = (o: KubeObject) => unknown;

const spec = (o: KubeObject): JsonObject | undefined => (isObject(o.spec) ? o.spec : undefined);
const specTemplate: TemplatePath = (o) => spec(o)?.template;

/** `group/resource` → where its pod template is. */
const TEMPLATES: ReadonlyMap<string, TemplatePath> = new Map<string, TemplatePath>([
  ['/replicationcontrollers', specTemplate],
  ['/podtemplates', (o) => (o as KubeObject & { template?: unknown }).template],
  ['apps/replicasets', specTemplate],
  ['apps/deployments', specTemplate],
  ['apps/statefulsets', specTemplate],
  ['apps/daemonsets', specTemplate],
  ['batch/jobs', specTemplate],
  ['batch/cronjobs', (o) => {
    const job = spec(o)?.jobTemplate;
    return isObject(job) && isObject(job.spec) ? job.spec.template : undefined;
  }],
]);

export function isPodController(group: string, resource: string): boolean {
  return TEMPLATES.has(`${group}/${resource}`);
}

export function podParts(pod: KubeObject): PodParts {
  return { annotations: strMap(pod.metadata.annotations), spec: spec(pod) ?? {} };
}

/** The pod a controller would make; undefined when it has no template (nothing to check). */
export function templateParts(group: string, resource: string, o: KubeObject): PodParts | undefined {
  const template = TEMPLATES.get(`${group}/${resource}`)?.(o);
  if (!isObject(template)) return undefined;
  const meta = isObject(template.metadata) ? template.metadata : {};
  return { annotations: strMap(meta.annotations), spec: isObject(template.spec) ? template.spec : {} };
}
