// A CustomResourceDefinition's conversion webhook, as upstream's apiextensions server calls it: one
// apiextensions.k8s.io/v1 ConversionReview per read or write that needs another version (a whole
// list in one review), the answer checked (uid, result, count, apiVersion and kind of each object),
// and of each converted object's metadata only labels and annotations kept from the webhook.
// Failures read as upstream's: `conversion webhook for GROUP/VERSION, Kind=KIND failed: ...`.
import { randomUUID } from 'node:crypto';
import { StatusError } from '../api/errors.js';
import type { ResourceType } from '../api/resource.js';
import { apiVersionOf, parseApiVersion, type KubeObject } from '../api/types.js';
import { isObject } from '../api/kinds/json.js';
import { WebhookCallError, type WebhookClient } from './webhook/client.js';
import type { ObjectConversion } from './object-store.js';

/** Upstream's timeout for conversion webhooks (they have no timeoutSeconds field). */
const CONVERSION_TIMEOUT_MS = 30_000;
const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';

function gvk(apiVersion: string, kind: string): string {
  const { group, version } = parseApiVersion(apiVersion);
  return `${group}/${version}, Kind=${kind}`;
}

/** The converted object, with the original's metadata but for labels and annotations (upstream's restoreObjectMeta). */
function restoreMeta(original: KubeObject, converted: KubeObject): KubeObject {
  const meta = { ...original.metadata };
  const labels = converted.metadata?.labels;
  const annotations = converted.metadata?.annotations;
  if (labels) meta.labels = labels;
  else delete meta.labels;
  if (annotations) meta.annotations = annotations;
  else delete meta.annotations;
  return { ...converted, metadata: meta };
}

export class ConversionWebhook implements ObjectConversion {
  readonly storageApiVersion: string;

  constructor(
    private readonly client: WebhookClient,
    private readonly rt: ResourceType & { conversionWebhook: NonNullable<ResourceType['conversionWebhook']> },
  ) {
    this.storageApiVersion = apiVersionOf(rt.group, rt.storageVersion ?? rt.version);
  }

  async convert(objects: readonly KubeObject[], apiVersion: string): Promise<KubeObject[]> {
    const todo: number[] = [];
    objects.forEach((o, i) => {
      if (o.apiVersion !== apiVersion) todo.push(i);
    });
    if (todo.length === 0) return [...objects];
    const first = objects[todo[0]!]!;
    const what = gvk(first.apiVersion ?? '', this.rt.kind);
    const fail = (why: string): StatusError => new StatusError(500, '', `conversion webhook for ${what} ${why}`);
    const uid = randomUUID();
    const request = { apiVersion: REVIEW_API_VERSION, kind: 'ConversionReview', request: { uid, desiredAPIVersion: apiVersion, objects: todo.map((i) => objects[i]) } };
    let answer: unknown;
    try {
      answer = await this.client.post(this.rt.conversionWebhook.clientConfig, request, CONVERSION_TIMEOUT_MS);
    } catch (e) {
      if (e instanceof WebhookCallError) throw fail(`failed: ${e.message}`);
      throw e;
    }
    const response = isObject(answer) ? answer.response : undefined;
    if (!isObject(response)) throw fail('failed: no response provided');
    if (response.uid !== uid) throw fail(`failed: expected response.uid="${uid}", got "${typeof response.uid === 'string' ? response.uid : ''}"`);
    const result = isObject(response.result) ? response.result : {};
    if (result.status !== 'Success') {
      throw fail(`failed: ${typeof result.message === 'string' && result.message ? result.message : `response.result.status was '${typeof result.status === 'string' ? result.status : ''}', not 'Success'`}`);
    }
    const converted = Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
    if (converted.length !== todo.length) throw fail(`returned ${converted.length} objects, expected ${todo.length}`);
    const out = [...objects];
    todo.forEach((index, i) => {
      const c = converted[i];
      if (!isObject(c) || !isObject(c.metadata)) throw fail(`returned invalid converted object at index ${i}: not an object`);
      if (c.apiVersion !== apiVersion) throw fail(`returned invalid converted object at index ${i}: invalid groupVersion (expected ${apiVersion}, received ${String(c.apiVersion ?? '')})`);
      if (c.kind !== this.rt.kind) throw fail(`returned invalid converted object at index ${i}: invalid kind (expected ${this.rt.kind}, received ${String(c.kind ?? '')})`);
      out[index] = restoreMeta(objects[index]!, c as KubeObject);
    });
    return out;
  }
}
