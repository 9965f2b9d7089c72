// MutatingAdmissionWebhook: before the kind's own validation, every matching webhook of every
// MutatingWebhookConfiguration is called in turn and may change the write with a JSON patch.
// Reinvocation as upstream's: a webhook with reinvocationPolicy IfNeeded is called once more when
// a later webhook (or, in the chain's second run, a built-in plugin) changed the object after it.
import { isStatusError, internalError } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import { isObject, jsonEqual } from '../../api/kinds/json.js';
import { applyJsonPatch } from '../patch/index.js';
import { asSent, callUnderPolicy } from './admission-review.js';
import { ReinvocationContext, type AdmissionAttributes, type AdmissionPlugin } from './plugin.js';
import { isExemptFromWebhooks, matchingWebhooks, selects, type WebhookInvocation } from './webhook-rules.js';
import type { AdmissionWebhookDeps } from './validating-webhook.js';

const PLUGIN = 'MutatingAdmissionWebhook';

/** Upstream's webhookReinvokeContext: who ran, who must run again, what the object was after the last webhook. */
interface ReinvokeState {
  lastOutput: string | undefined;
  previouslyInvoked: Set<string>;
  reinvoke: Set<string>;
}

function requireReinvokingPrevious(st: ReinvokeState): void {
  for (const uid of st.previouslyInvoked) st.reinvoke.add(uid);
  st.previouslyInvoked.clear();
}

/** Replaces the contents of the object the write holds: the caller keeps its reference to it. */
function replaceInPlace(target: KubeObject, next: KubeObject): void {
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, next);
}

/** Applies a webhook's patch to the write's object; true when it changed anything. */
function applyPatch(inv: WebhookInvocation, a: AdmissionAttributes, patchBase64: string): boolean {
  const name = inv.webhook.hook.name;
  let ops: unknown;
  try {
    ops = JSON.parse(Buffer.from(patchBase64, 'base64').toString('utf8'));
  } catch (e) {
    throw internalError(e instanceof Error ? e.message : String(e));
  }
  if (Array.isArray(ops) && ops.length === 0) return false;
  const object = a.object;
  if (!object) throw internalError(`admission webhook "${name}" attempted to modify the object, which is not supported for this operation`);
  // The webhook saw the object in the version its rule named (matchPolicy Equivalent): patch that, then bring it back.
  let patched: unknown;
  try {
    patched = applyJsonPatch(asSent(object, a, inv), ops);
  } catch (e) {
    throw internalError(isStatusError(e) ? e.status.message ?? '' : e instanceof Error ? e.message : String(e));
  }
  if (!isObject(patched) || !isObject(patched.metadata)) throw internalError(`admission webhook "${name}" returned a patch that does not leave an object`);
  const next = patched as KubeObject;
  if (inv.resource !== a.resource) next.apiVersion = object.apiVersion;
  if (jsonEqual(next, object)) return false;
  replaceInPlace(object, next);
  return true;
}

export function mutatingAdmissionWebhook(deps: AdmissionWebhookDeps): AdmissionPlugin {
  return {
    name: PLUGIN,
    handles: (_op, rt) => !isExemptFromWebhooks(rt),
    mutate: (a) => {
      const matched = matchingWebhooks(deps.configurations.current(), a, deps);
      // The common case, no webhook's rules match the write (or no webhooks at all), stays synchronous:
      // none was called in the first run, so none is due again in the second.
      if (matched.length === 0) return undefined;
      return (async () => {
        const r = (a.reinvocation ??= new ReinvocationContext());
        const st = r.value<ReinvokeState>(PLUGIN, () => ({ lastOutput: undefined, previouslyInvoked: new Set(), reinvoke: new Set() }));
        // Built-in plugins run again in the second pass; if they changed the object, every eligible webhook runs again.
        if (r.isReinvoke && st.lastOutput !== undefined && JSON.stringify(a.object) !== st.lastOutput) requireReinvokingPrevious(st);
        try {
          for (const inv of matched) {
            const uid = inv.webhook.uid;
            // In the second pass only webhooks called before and due again run (never one called for the first time).
            if (r.isReinvoke && !st.reinvoke.has(uid)) continue;
            if (!(await selects(inv.webhook, a, deps))) continue;
            const changed = await callUnderPolicy(deps, 'admit', inv, a, (answer) => (answer.patch ? applyPatch(inv, a, answer.patch) : false));
            if (changed) {
              requireReinvokingPrevious(st);
              r.shouldReinvoke = true;
            }
            if (inv.webhook.hook.reinvocationPolicy === 'IfNeeded') st.previouslyInvoked.add(uid);
          }
        } finally {
          // Read only at the start of the second pass, and only to decide whether webhooks already called run again.
          st.lastOutput = !r.isReinvoke && st.previouslyInvoked.size > 0 && a.object ? JSON.stringify(a.object) : undefined;
        }
      })();
    },
  };
}
