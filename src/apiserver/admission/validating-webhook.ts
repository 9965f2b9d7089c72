// ValidatingAdmissionWebhook: after the kind's own validation, every matching webhook of every
// ValidatingWebhookConfiguration is asked whether the write may go on. They are asked at once, as
// upstream asks them (none may change the object); the first refusal in webhook order fails the write.
import type { WebhookClient } from '../webhook/client.js';
import { WebhookCallFailure, addWarnings, callAdmissionWebhook, denial, failedClosed, type AdmissionWebhookMetrics } from './admission-review.js';
import type { AdmissionAttributes, AdmissionPlugin } from './plugin.js';
import { isExemptFromWebhooks, matchingWebhooks, selects, type WebhookConfigurations, type WebhookInvocation, type WebhookMatchDeps } from './webhook-rules.js';

export interface AdmissionWebhookDeps extends WebhookMatchDeps {
  configurations: WebhookConfigurations;
  client: WebhookClient;
  metrics: AdmissionWebhookMetrics;
  now(): number;
}

async function callOne(inv: WebhookInvocation, a: AdmissionAttributes, deps: AdmissionWebhookDeps): Promise<Error | undefined> {
  const hook = inv.webhook.hook;
  const started = deps.now();
  let rejected = false;
  try {
    const answer = await callAdmissionWebhook(deps.client, hook, a, inv, false);
    addWarnings(a, answer.warnings);
    if (answer.allowed) return undefined;
    rejected = true;
    const e = denial(hook.name, answer.status);
    deps.metrics.observeRejection(hook.name, 'validating', a.operation, 'no_error', e.code);
    return e;
  } catch (e) {
    rejected = true;
    if (e instanceof WebhookCallFailure) {
      if (hook.failurePolicy === 'Ignore') {
        rejected = false;
        deps.metrics.observeFailOpen(hook.name, 'validating');
        return undefined;
      }
      deps.metrics.observeRejection(hook.name, 'validating', a.operation, 'calling_webhook_error', e.code);
      return failedClosed(e);
    }
    deps.metrics.observeRejection(hook.name, 'validating', a.operation, 'apiserver_internal_error', 500);
    return e instanceof Error ? e : new Error(String(e));
  } finally {
    deps.metrics.observeWebhook(hook.name, 'validating', a.operation, rejected, (deps.now() - started) / 1000);
  }
}

export function validatingAdmissionWebhook(deps: AdmissionWebhookDeps): AdmissionPlugin {
  return {
    name: 'ValidatingAdmissionWebhook',
    handles: (_op, rt) => !isExemptFromWebhooks(rt),
    validate: (a) => {
      const matched = matchingWebhooks(deps.configurations.current(), a, deps);
      // The common case, no webhook's rules match the write (or no webhooks at all), stays synchronous.
      if (matched.length === 0) return undefined;
      return (async () => {
        const invocations: WebhookInvocation[] = [];
        for (const inv of matched) if (await selects(inv.webhook, a, deps)) invocations.push(inv);
        const results = await Promise.all(invocations.map((inv) => callOne(inv, a, deps)));
        const failed = results.find((r) => r !== undefined);
        if (failed) throw failed;
      })();
    },
  };
}
