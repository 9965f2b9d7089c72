// One call of one admission webhook, as upstream's dispatchers make it: an admission.k8s.io/v1
// AdmissionReview request built from the write, the answer checked (uid, kind, patch type), and
// what can go wrong sorted the way upstream sorts it, so failurePolicy and the client's Status
// come out the same:
//   - the webhook could not be called or its answer makes no sense: a call failure, which
//     failurePolicy Ignore lets pass and Fail turns into `Internal error occurred: failed calling
//     webhook "NAME": ...`;
//   - the webhook said no: `admission webhook "NAME" denied the request: MSG`, with its code;
//   - anything else (a dry run the webhook cannot take, a patch that does not apply) fails the write.
import { randomUUID } from 'node:crypto';
import { StatusError, badRequest, internalError } from '../../api/errors.js';
import { apiVersionOf, type KubeObject, type Status } from '../../api/types.js';
import { isObject } from '../../api/kinds/json.js';
import type { AdmissionWebhook } from '../../api/kinds/admission-webhook.js';
import { WebhookCallError, type WebhookClient } from '../webhook/client.js';
import type { AdmissionAttributes } from './plugin.js';
import { requestNamespace, type WebhookInvocation } from './webhook-rules.js';

export const ADMISSION_REVIEW_API_VERSION = 'admission.k8s.io/v1';

/** How upstream's metrics name the two kinds of admission webhook. */
export type WebhookType = 'admit' | 'validating';

/** apiserver_admission_webhook_* as upstream reports them (src/apiserver/metrics.ts registers them). */
export interface AdmissionWebhookMetrics {
  observeWebhook(name: string, type: WebhookType, operation: string, rejected: boolean, seconds: number): void;
  observeRejection(name: string, type: WebhookType, operation: string, errorType: 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error', code: number): void;
  observeFailOpen(name: string, type: WebhookType): void;
}

/** The webhook could not be called, or answered something unusable: failurePolicy decides. */
export class WebhookCallFailure extends Error {
  constructor(
    readonly webhook: string,
    reason: string,
    /** The code counted in the rejection metric when the failure fails the write. */
    readonly code: number,
  ) {
    super(`failed calling webhook "${webhook}": ${reason}`);
  }
}

/** What a webhook answered (upstream's AdmissionResponse, the fields skiff acts on). */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Partial<Status>;
  patch?: string;
  patchType?: string;
  warnings?: string[];
}

/** Upstream ToStatusErr: a denial as the client sees it, never with a success code or status. */
export function denial(webhook: string, result: Partial<Status> | undefined): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const r = result ?? {};
  const code = typeof r.code === 'number' && r.code >= 400 ? r.code : 400;
  const message = r.message ? `${deniedBy}: ${r.message}` : r.reason ? `${deniedBy}: ${r.reason}` : `${deniedBy} without explanation`;
  const e = new StatusError(code, 'Forbidden', message, r.details);
  // The webhook's own reason, whatever it is (clients read it as an opaque string); none if it gave none.
  if (typeof r.reason === 'string' && r.reason !== '') e.status.reason = r.reason as Status['reason'];
  else delete e.status.reason;
  return e;
}

/** Upstream NewDryRunUnsupportedErr: a dry run reaching a webhook that may have side effects. */
function dryRunUnsupported(webhook: string): StatusError {
  return badRequest(`admission webhook "${webhook}" does not support dry run`);
}

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const;

/** The AdmissionReview a webhook is sent for a write. */
export function admissionReview(uid: string, a: AdmissionAttributes, inv: WebhookInvocation, object: KubeObject | undefined, oldObject: KubeObject | undefined): Record<string, unknown> {
  const rt = inv.resource;
  const options: Record<string, unknown> = { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[a.operation] };
  if (a.dryRun) options.dryRun = ['All'];
  if (a.fieldManager && a.operation !== 'DELETE') options.fieldManager = a.fieldManager;
  const namespace = requestNamespace(a);
  return {
    apiVersion: ADMISSION_REVIEW_API_VERSION,
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: rt.group, version: rt.version, kind: rt.kind },
      resource: { group: rt.group, version: rt.version, resource: rt.resource },
      ...(a.subresource ? { subResource: a.subresource } : {}),
      requestKind: { group: a.resource.group, version: a.resource.version, kind: a.resource.kind },
      requestResource: { group: a.resource.group, version: a.resource.version, resource: a.resource.resource },
      ...(a.subresource ? { requestSubResource: a.subresource } : {}),
      ...(a.name ? { name: a.name } : {}),
      ...(namespace ? { namespace } : {}),
      operation: a.operation,
      userInfo: { username: a.user.name, groups: a.user.groups },
      object: object ?? null,
      oldObject: oldObject ?? null,
      dryRun: a.dryRun,
      options,
    },
  };
}

/** Upstream VerifyAdmissionResponse for v1: the answer is this request's, and a patch says its type. */
function verifyResponse(uid: string, mutating: boolean, answer: unknown): AdmissionResponse {
  if (!isObject(answer)) throw new Error('webhook response was absent');
  const gvk = `${typeof answer.apiVersion === 'string' ? answer.apiVersion : '/'}, Kind=${typeof answer.kind === 'string' ? answer.kind : ''}`;
  if (answer.apiVersion !== ADMISSION_REVIEW_API_VERSION || answer.kind !== 'AdmissionReview') throw new Error(`expected webhook response of ${ADMISSION_REVIEW_API_VERSION}, Kind=AdmissionReview, got ${gvk}`);
  const r = answer.response;
  if (!isObject(r)) throw new Error('webhook response was absent');
  if (r.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${typeof r.uid === 'string' ? r.uid : ''}"`);
  const patch = typeof r.patch === 'string' ? r.patch : undefined;
  const patchType = typeof r.patchType === 'string' ? r.patchType : '';
  if (patch && patchType === '') throw new Error('webhook returned response.patch but not response.patchType');
  if (patch && patchType !== 'JSONPatch') throw new Error(`webhook returned invalid response.patchType of "${patchType}"`);
  if (patch && !mutating) throw new Error('validating webhook may not return response.patch');
  return {
    uid,
    allowed: r.allowed === true,
    ...(isObject(r.status) ? { status: r.status as Partial<Status> } : {}),
    ...(patch ? { patch, patchType } : {}),
    ...(Array.isArray(r.warnings) ? { warnings: r.warnings.filter((w): w is string => typeof w === 'string') } : {}),
  };
}

/** An object of the write as the webhook sees it: in the version its rule named (matchPolicy Equivalent). */
export function asSent(o: KubeObject, a: AdmissionAttributes, inv: WebhookInvocation): KubeObject {
  return inv.resource === a.resource ? o : { ...o, apiVersion: apiVersionOf(inv.resource.group, inv.resource.version) };
}

/** Upstream's default when a webhook says nothing of its timeout. */
const DEFAULT_TIMEOUT_SECONDS = 10;

/**
 * Sends the review to the webhook and gives back its checked answer. Throws WebhookCallFailure when
 * the call fails or the answer is unusable, StatusError for a dry run the webhook cannot take.
 */
export async function callAdmissionWebhook(client: WebhookClient, hook: AdmissionWebhook, a: AdmissionAttributes, inv: WebhookInvocation, mutating: boolean): Promise<AdmissionResponse> {
  if (a.dryRun && hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') {
    if (hook.sideEffects === undefined) throw new WebhookCallFailure(hook.name, 'Webhook SideEffects is nil', 400);
    throw dryRunUnsupported(hook.name);
  }
  const uid = randomUUID();
  const [object, oldObject] = [a.object, a.oldObject].map((o) => o && asSent(o, a, inv));
  const timeoutMs = Math.min(Math.max(hook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS, 1), 30) * 1000;
  let answer: unknown;
  try {
    answer = await client.post(hook.clientConfig, admissionReview(uid, a, inv, object, oldObject), timeoutMs);
  } catch (e) {
    if (e instanceof WebhookCallError) throw new WebhookCallFailure(hook.name, `failed to call webhook: ${e.message}`, e.httpStatus ?? 503);
    throw e;
  }
  try {
    return verifyResponse(uid, mutating, answer);
  } catch (e) {
    throw new WebhookCallFailure(hook.name, `received invalid webhook response: ${e instanceof Error ? e.message : String(e)}`, 503);
  }
}

/** A call failure as the write fails with it under failurePolicy Fail. */
export function failedClosed(e: WebhookCallFailure): StatusError {
  return internalError(e.message);
}

/** Warnings from a webhook, added once each (a write may be admitted more than once). */
export function addWarnings(a: AdmissionAttributes, warnings: readonly string[] | undefined): void {
  for (const w of warnings ?? []) a.warn?.(w);
}

/** What calling a webhook under its failurePolicy needs. */
export interface WebhookCallDeps {
  client: WebhookClient;
  metrics: AdmissionWebhookMetrics;
  now(): number;
}

/**
 * Calls one webhook of a matching invocation and sorts the outcome as upstream's dispatchers do,
 * counting it in the metrics the same way for both kinds: an allowing answer is handed to `act`
 * (the mutating plugin applies its patch there) and what `act` gives back is returned; a call that
 * failed under failurePolicy Ignore returns undefined; anything else throws the error the write
 * fails with: the webhook's denial, `failed calling webhook` under Fail, or an internal error
 * (counted with code 0, as upstream counts what is neither a call failure nor a denial).
 */
export async function callUnderPolicy<T>(deps: WebhookCallDeps, type: WebhookType, inv: WebhookInvocation, a: AdmissionAttributes, act: (answer: AdmissionResponse) => T): Promise<T | undefined> {
  const hook = inv.webhook.hook;
  const started = deps.now();
  const rejectedWith = (errorType: Parameters<AdmissionWebhookMetrics['observeRejection']>[3], code: number, e: unknown): unknown => {
    deps.metrics.observeRejection(hook.name, type, a.operation, errorType, code);
    return e;
  };
  let rejected = true;
  try {
    let answer: AdmissionResponse;
    try {
      answer = await callAdmissionWebhook(deps.client, hook, a, inv, type === 'admit');
    } catch (e) {
      if (!(e instanceof WebhookCallFailure)) throw rejectedWith('apiserver_internal_error', 0, e);
      if (hook.failurePolicy !== 'Ignore') throw rejectedWith('calling_webhook_error', e.code, failedClosed(e));
      rejected = false;
      deps.metrics.observeFailOpen(hook.name, type);
      return undefined;
    }
    addWarnings(a, answer.warnings);
    if (!answer.allowed) {
      const e = denial(hook.name, answer.status);
      throw rejectedWith('no_error', e.code, e);
    }
    let out: T;
    try {
      out = act(answer);
    } catch (e) {
      throw rejectedWith('apiserver_internal_error', 0, e);
    }
    rejected = false;
    return out;
  } finally {
    deps.metrics.observeWebhook(hook.name, type, a.operation, rejected, (deps.now() - started) / 1000);
  }
}
