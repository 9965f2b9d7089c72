// ValidatingAdmissionWebhook: after the kind's own validation, every matching webhook of every
// ValidatingWebhookConfiguration is asked whether the write may go on. They are asked at once, as
// upstream asks them (none may change the object); the first refusal in webhook order fails the write.
import { callUnderPolicy, type WebhookCallDeps } from './admission-review.js';
import type { AdmissionPlugin } from './plugin.js';
import { isExemptFromWebhooks, matchingWebhooks, selects, type WebhookConfigurations, type WebhookInvocation, type WebhookMatchDeps } from './webhook-rules.js';

export interface AdmissionWebhookDeps extends WebhookMatchDeps, WebhookCallDeps {
  configurations: WebhookConfigurations;
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
        // Each call's refusal is kept, not thrown, so the first in webhook order is the one the write fails with.
        const results = await Promise.all(invocations.map((inv) => callUnderPolicy(deps, 'validating', inv, a, () => undefined).then(() => undefined, (e: unknown) => e)));
        const failed = results.find((r) => r !== undefined);
        if (failed) throw failed;
      })();
    },
  };
}
