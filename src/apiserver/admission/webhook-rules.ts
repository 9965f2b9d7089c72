// Which admission webhooks a write goes to, as upstream's ShouldCallHook decides: the rules
// (operations, groups, versions, resources with subresources, scope, and with matchPolicy
// Equivalent the same resource under another version), then the namespace selector (the
// namespace's labels; a Namespace's own labels when it is the object written) and the object
// selector (old or new object's labels). Upstream asks the selectors first; the answer is the same
// either way, and rules first keep a write that no webhook's rules match synchronous, with no
// namespace looked up. Shared by the validating and the mutating plugin.
import type { ResourceType } from '../../api/resource.js';
import type { KubeObject, Labels } from '../../api/types.js';
import { internalError, notFound } from '../../api/errors.js';
import { labelSelectorFromObject, type LabelSelector } from '../../api/labels.js';
import { ADMISSIONREGISTRATION_GROUP, type AdmissionWebhook, type RuleWithOperations, type WebhookConfiguration } from '../../api/kinds/admission-webhook.js';
import { isCore, type AdmissionAttributes, type Operation } from './plugin.js';

/** One webhook of one configuration, with its selectors parsed once. */
export interface ConfiguredWebhook {
  /** Unique in the server: configuration name and position (upstream's webhook UID). */
  uid: string;
  configuration: string;
  hook: AdmissionWebhook;
  namespaceSelector: LabelSelector | Error;
  objectSelector: LabelSelector | Error;
}

/** What a matching webhook is called with: the resource and kind as the webhook asked for them. */
export interface WebhookInvocation {
  webhook: ConfiguredWebhook;
  /** The type the webhook's rule matched: the written one, or an equivalent version (matchPolicy Equivalent). */
  resource: ResourceType;
}

export interface WebhookMatchDeps {
  /** A namespace's labels; undefined when it does not exist (storage consulted when the cache has not seen it). */
  namespaceLabels(name: string): Promise<Labels | undefined>;
  /** The other served versions of the same group and resource (custom resources with several versions). */
  equivalents(rt: ResourceType): readonly ResourceType[];
}

function parseSelector(sel: unknown): LabelSelector | Error {
  try {
    // An absent selector was defaulted to {}; one stored before defaults existed matches everything too.
    return labelSelectorFromObject(sel ?? {});
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** Every webhook of `configurations`, configurations in name order as upstream calls them. */
export function configuredWebhooks(configurations: readonly KubeObject[]): ConfiguredWebhook[] {
  const sorted = [...(configurations as WebhookConfiguration[])].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
  const out: ConfiguredWebhook[] = [];
  for (const c of sorted) {
    (c.webhooks ?? []).forEach((hook, i) => {
      out.push({ uid: `${c.metadata.name}/${hook.name}/${i}`, configuration: c.metadata.name!, hook, namespaceSelector: parseSelector(hook.namespaceSelector), objectSelector: parseSelector(hook.objectSelector) });
    });
  }
  return out;
}

/**
 * Webhooks are never called for the objects that configure admission: a broken webhook could
 * otherwise lock out its own repair (upstream's IsExemptAdmissionConfigurationResource).
 */
export function isExemptFromWebhooks(rt: ResourceType): boolean {
  return rt.group === ADMISSIONREGISTRATION_GROUP;
}

const isNamespaces = (rt: ResourceType): boolean => isCore(rt, 'namespaces');

/** The namespace a write is in, as upstream's attributes say: a Namespace's own name for a Namespace. */
export function requestNamespace(a: AdmissionAttributes): string {
  return isNamespaces(a.resource) ? a.name : (a.namespace ?? '');
}

function anyOrExact(items: readonly string[] | undefined, requested: string): boolean {
  return (items ?? []).some((i) => i === '*' || i === requested);
}

/** Upstream's rules.Matcher for one rule against a write on `rt`. */
export function ruleMatches(rule: RuleWithOperations, operation: Operation, rt: ResourceType, subresource: string, namespace: string): boolean {
  return anyOrExact(rule.apiVersions, rt.version) && ruleMatchesAnyVersion(rule, operation, rt, subresource, namespace);
}

/** The rule matches a write on `rt` but for its version: then, and only then, may it match another version of it. */
function ruleMatchesAnyVersion(rule: RuleWithOperations, operation: Operation, rt: ResourceType, subresource: string, namespace: string): boolean {
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced' && (isNamespaces(rt) || namespace === '')) return false;
  if (scope === 'Cluster' && !(isNamespaces(rt) || namespace === '')) return false;
  if (scope !== '*' && scope !== 'Namespaced' && scope !== 'Cluster') return false;
  if (!(rule.operations ?? []).some((op) => op === '*' || op === operation)) return false;
  if (!anyOrExact(rule.apiGroups, rt.group)) return false;
  return (rule.resources ?? []).some((r) => {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    return (res === '*' || res === rt.resource) && (sub === '*' || sub === subresource);
  });
}

function objectMatches(sel: LabelSelector, a: AdmissionAttributes): boolean {
  if (sel.isEmpty()) return true;
  return (a.object !== undefined && sel.matches(a.object.metadata?.labels)) || (a.oldObject !== undefined && sel.matches(a.oldObject.metadata?.labels));
}

/** The labels the namespace selector is matched against, or a Status when the namespace does not exist. */
async function namespaceLabelsFor(a: AdmissionAttributes, deps: WebhookMatchDeps): Promise<Labels | Error> {
  // A Namespace being created or updated is not in the cache yet in this form: its own labels count.
  if (isNamespaces(a.resource) && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) return a.object?.metadata?.labels ?? {};
  const name = requestNamespace(a);
  const labels = await deps.namespaceLabels(name);
  return labels ?? notFound('namespaces', '', name);
}

/**
 * The type `w`'s rules match this write as: the written one, or with matchPolicy Equivalent another
 * version of it; undefined when no rule matches. Synchronous and cheap: every write asks it of every
 * webhook, and one that no rule matches never reaches the selectors' lookups.
 */
export function matchedResource(w: ConfiguredWebhook, a: AdmissionAttributes, deps: Pick<WebhookMatchDeps, 'equivalents'>): ResourceType | undefined {
  const namespace = requestNamespace(a);
  const rules = w.hook.rules ?? [];
  if (rules.some((r) => ruleMatches(r, a.operation, a.resource, a.subresource, namespace))) return a.resource;
  if ((w.hook.matchPolicy ?? 'Equivalent') !== 'Equivalent') return undefined;
  // Another version of the resource has the same group, name and scope: only a rule that names this
  // write but for its version can match one, so the served versions are looked up for such a rule
  // alone, never for a write no rule names. Earlier rules first, as upstream honours them.
  let equivalents: readonly ResourceType[] | undefined;
  for (const r of rules) {
    if (!ruleMatchesAnyVersion(r, a.operation, a.resource, a.subresource, namespace)) continue;
    equivalents ??= deps.equivalents(a.resource);
    for (const eq of equivalents) if (eq !== a.resource && anyOrExact(r.apiVersions, eq.version)) return eq;
  }
  return undefined;
}

/** The webhooks whose rules match this write, in calling order; their selectors are still to be asked (`selects`). */
export function matchingWebhooks(hooks: readonly ConfiguredWebhook[], a: AdmissionAttributes, deps: Pick<WebhookMatchDeps, 'equivalents'>): WebhookInvocation[] {
  const out: WebhookInvocation[] = [];
  for (const webhook of hooks) {
    const resource = matchedResource(webhook, a, deps);
    if (resource) out.push({ webhook, resource });
  }
  return out;
}

/**
 * Whether the selectors of a webhook whose rules matched pick this write. A selector that cannot
 * be evaluated (a namespace that does not exist) throws unless the other selector already says no,
 * as upstream's: a webhook that does not apply never fails a write.
 */
export async function selects(w: ConfiguredWebhook, a: AdmissionAttributes, deps: WebhookMatchDeps): Promise<boolean> {
  let nsError: Error | undefined;
  if (requestNamespace(a) !== '' || isNamespaces(a.resource)) {
    const sel = w.namespaceSelector;
    if (sel instanceof Error) nsError = internalError(sel.message);
    else if (!sel.isEmpty()) {
      const labels = await namespaceLabelsFor(a, deps);
      if (labels instanceof Error) nsError = labels;
      else if (!sel.matches(labels)) return false;
    }
  }
  let objError: Error | undefined;
  if (w.objectSelector instanceof Error) objError = internalError(w.objectSelector.message);
  else if (!objectMatches(w.objectSelector, a)) return false;
  if (nsError) throw nsError;
  if (objError) throw objError;
  return true;
}

/** Whether `w` is called for this write, and as which resource (upstream's ShouldCallHook): rules, then selectors. */
export async function shouldCallHook(w: ConfiguredWebhook, a: AdmissionAttributes, deps: WebhookMatchDeps): Promise<WebhookInvocation | undefined> {
  const resource = matchedResource(w, a, deps);
  if (!resource) return undefined;
  return (await selects(w, a, deps)) ? { webhook: w, resource } : undefined;
}

/** The webhook configurations as stored, parsed again only when they change. */
export class WebhookConfigurations {
  private seen = -1;
  private hooks: ConfiguredWebhook[] = [];

  constructor(private readonly source: { changeCount(): number; list(): readonly KubeObject[] }) {}

  current(): readonly ConfiguredWebhook[] {
    const count = this.source.changeCount();
    if (count !== this.seen) {
      this.hooks = configuredWebhooks(this.source.list());
      this.seen = count;
    }
    return this.hooks;
  }
}
