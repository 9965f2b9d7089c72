// PodSecurity: the Pod Security Standards a namespace's `pod-security.kubernetes.io/*` labels ask
// for. Enforce refuses a pod that violates its level; warn adds a Warning to the answer for a pod
// or a pod controller's template; a change of a namespace's enforce level warns about the pods
// already there. Audit would annotate the request's audit event, which skiff's audit log does not
// take from admission yet: its labels are validated and otherwise have no effect. As upstream, a
// namespace without labels is privileged by default.
import { forbiddenObject, internalError, invalid } from '../../api/errors.js';
import { arr, isObject } from '../../api/kinds/json.js';
import type { PodParts, Violation } from '../../api/pod-security/check.js';
import { evaluatePod, violationDetail, violationReasons } from '../../api/pod-security/evaluator.js';
import {
  AUDIT_LABEL,
  AUDIT_VERSION_LABEL,
  ENFORCE_LABEL,
  ENFORCE_VERSION_LABEL,
  WARN_LABEL,
  WARN_VERSION_LABEL,
  compareLevels,
  equivalentLevelVersion,
  hasPodSecurityLabels,
  isFullyPrivileged,
  levelVersionString,
  parseLevel,
  parseVersion,
  policyFromLabels,
  sameLevelVersion,
  type EvaluatedPolicy,
  type LevelVersion,
  type Policy,
} from '../../api/pod-security/policy.js';
import { isPodController, podParts, templateParts } from '../../api/pod-security/workloads.js';
import type { KubeObject } from '../../api/types.js';
import { isCore, type AdmissionAttributes, type AdmissionPlugin } from './plugin.js';

/** Upstream's PodSecurityConfiguration (pod-security.admission.config.k8s.io): defaults and exemptions. */
export interface PodSecurityConfiguration {
  defaults?: {
    enforce?: string;
    'enforce-version'?: string;
    audit?: string;
    'audit-version'?: string;
    warn?: string;
    'warn-version'?: string;
  };
  exemptions?: {
    /** Requests by these users are not checked. */
    usernames?: readonly string[];
    /** Pods and templates in these namespaces are not checked. */
    namespaces?: readonly string[];
    /** Pods that run under these RuntimeClasses are not checked. */
    runtimeClasses?: readonly string[];
  };
}

export interface PodSecurityLookups {
  /** A namespace as the watch cache holds it (shared: never changed). */
  cachedNamespace(name: string): KubeObject | undefined;
  /** The cached namespace, or the stored one the cache has not seen yet. */
  findNamespace(name: string): Promise<KubeObject | undefined>;
  /** The pods of a namespace, as the watch cache holds them. */
  podsIn(namespace: string): readonly KubeObject[];
}

/** Pod subresources that cannot change what the checks read. Any other (ephemeralcontainers, resize) is checked. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);
/** Upstream checks at most this many existing pods when a namespace's enforce level changes. */
const MAX_PODS_TO_CHECK = 3000;

function defaultsPolicy(config: PodSecurityConfiguration): Policy {
  const d = config.defaults ?? {};
  const lv = (mode: string, level: string | undefined, version: string | undefined): LevelVersion => {
    const l = parseLevel(level ?? 'privileged');
    const v = parseVersion(version ?? 'latest');
    if (l.error || v.error) throw new Error(`PodSecurity configuration: defaults.${mode}: ${l.error ?? v.error}`);
    return { level: l.level, version: v.version };
  };
  return { enforce: lv('enforce', d.enforce, d['enforce-version']), audit: lv('audit', d.audit, d['audit-version']), warn: lv('warn', d.warn, d['warn-version']) };
}

/** Whether an update can change what the checks read: only images, and containers added, may change on a pod. */
export function isSignificantPodUpdate(pod: KubeObject, old: KubeObject): boolean {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const oldSpec = isObject(old.spec) ? old.spec : {};
  for (const key of ['containers', 'initContainers']) {
    const now = arr(spec[key]);
    const before = arr(oldSpec[key]);
    if (now.length !== before.length) return true;
    for (let i = 0; i < now.length; i++) if (imageOf(now[i]) !== imageOf(before[i])) return true;
  }
  const oldEphemeral = arr(oldSpec.ephemeralContainers);
  for (const c of arr(spec.ephemeralContainers)) {
    const name = isObject(c) ? c.name : undefined;
    const previous = oldEphemeral.find((o) => isObject(o) && o.name === name);
    if (previous === undefined || imageOf(previous) !== imageOf(c)) return true;
  }
  return false;
}

function imageOf(c: unknown): unknown {
  return isObject(c) ? c.image : undefined;
}

export function podSecurity(lookups: PodSecurityLookups, config: PodSecurityConfiguration = {}): AdmissionPlugin {
  const defaults = defaultsPolicy(config);
  const exemptUsers = new Set(config.exemptions?.usernames ?? []);
  const exemptNamespaces = new Set(config.exemptions?.namespaces ?? []);
  const exemptRuntimeClasses = new Set(config.exemptions?.runtimeClasses ?? []);
  const unlabelled: EvaluatedPolicy = { policy: defaults, errors: [] };
  // A namespace object in the cache is replaced, never changed, when its labels change: its
  // policy is worked out once per version of the object.
  const policies = new WeakMap<KubeObject, EvaluatedPolicy>();

  const policyOf = (ns: KubeObject): EvaluatedPolicy => {
    const labels = ns.metadata.labels;
    if (!hasPodSecurityLabels(labels)) return unlabelled;
    let p = policies.get(ns);
    if (!p) policies.set(ns, (p = policyFromLabels(labels, defaults)));
    return p;
  };

  const exempt = (a: AdmissionAttributes): boolean => (a.namespace !== undefined && exemptNamespaces.has(a.namespace)) || exemptUsers.has(a.user.name);

  /** The namespace's policy, synchronously when the cache has the namespace (the usual case). */
  const withPolicy = (a: AdmissionAttributes, then: (p: EvaluatedPolicy) => void): void | Promise<void> => {
    const name = a.namespace ?? '';
    const cached = lookups.cachedNamespace(name);
    if (cached) return then(policyOf(cached));
    return lookups.findNamespace(name).then((ns) => {
      if (!ns) throw internalError(`failed to lookup namespace ${JSON.stringify(name)}`);
      then(policyOf(ns));
    });
  };

  /** Refuses (enforce) or warns about one pod or template; audit has no annotation to go to. */
  const evaluate = (a: AdmissionAttributes, policy: Policy, parts: PodParts, enforce: boolean): void => {
    const runtimeClass = parts.spec.runtimeClassName;
    if (typeof runtimeClass === 'string' && exemptRuntimeClasses.has(runtimeClass)) return;
    let enforced: Violation[] | undefined;
    if (enforce) {
      enforced = evaluatePod(policy.enforce, parts);
      if (enforced.length > 0) {
        throw forbiddenObject(a.resource.resource, a.resource.group, a.name, `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${violationDetail(enforced)}`);
      }
    }
    const warned = enforced && sameLevelVersion(policy.warn, policy.enforce) ? enforced : evaluatePod(policy.warn, parts);
    if (warned.length > 0) a.warn?.(`would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${violationDetail(warned)}`);
  };

  const validatePod = (a: AdmissionAttributes): void | Promise<void> => {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource) || !a.object || exempt(a)) return;
    if (a.operation === 'UPDATE' && a.oldObject && !isSignificantPodUpdate(a.object, a.oldObject)) return;
    const pod = a.object;
    return withPolicy(a, ({ policy, errors }) => {
      if (errors.length === 0 && isFullyPrivileged(policy)) return;
      evaluate(a, policy, podParts(pod), true);
    });
  };

  const validateController = (a: AdmissionAttributes): void | Promise<void> => {
    if (a.subresource !== '' || !a.object || exempt(a)) return;
    const obj = a.object;
    return withPolicy(a, ({ policy }) => {
      // Only warn shows: controllers are never refused, and audit has no annotation to go to.
      if (policy.warn.level === 'privileged') return;
      const parts = templateParts(a.resource.group, a.resource.resource, obj);
      if (parts) evaluate(a, policy, parts, false);
    });
  };

  /** `namespace "x" is exempt…`: labels on an exempt namespace that ask for more than the defaults. */
  const exemptNamespaceWarning = (name: string, policy: Policy, labels: Readonly<Record<string, string>>): string | undefined => {
    if (isFullyPrivileged(policy)) return undefined;
    if (equivalentLevelVersion(policy.enforce, defaults.enforce) && equivalentLevelVersion(policy.audit, defaults.audit) && equivalentLevelVersion(policy.warn, defaults.warn)) return undefined;
    const parts: string[] = [];
    const mode = (label: string, versionLabel: string, key: string, lv: LevelVersion): void => {
      if (lv.level !== 'privileged' && (label in labels || versionLabel in labels)) parts.push(`${key}=${levelVersionString(lv)}`);
    };
    mode(ENFORCE_LABEL, ENFORCE_VERSION_LABEL, 'enforce', policy.enforce);
    mode(AUDIT_LABEL, AUDIT_VERSION_LABEL, 'audit', policy.audit);
    mode(WARN_LABEL, WARN_VERSION_LABEL, 'warn', policy.warn);
    return `namespace ${JSON.stringify(name)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
  };

  /** Warnings about the namespace's pods that the new enforce level would refuse, grouped by reason. */
  const existingPodWarnings = (namespace: string, enforce: LevelVersion): string[] => {
    const first: KubeObject[] = [];
    const replicas: KubeObject[] = [];
    const seenControllers = new Set<string>();
    // One pod per controller first: its siblings would most likely say the same.
    for (const pod of lookups.podsIn(namespace)) {
      const runtimeClass = isObject(pod.spec) ? pod.spec.runtimeClassName : undefined;
      if (typeof runtimeClass === 'string' && exemptRuntimeClasses.has(runtimeClass)) continue;
      const controller = pod.metadata.ownerReferences?.find((r) => r.controller === true);
      if (!controller) first.push(pod);
      else if (seenControllers.has(controller.uid)) replicas.push(pod);
      else {
        seenControllers.add(controller.uid);
        first.push(pod);
      }
    }
    const all = [...first, ...replicas];
    const checked = all.slice(0, MAX_PODS_TO_CHECK);
    const byReasons = new Map<string, { name: string; count: number }>();
    for (const pod of checked) {
      const violations = evaluatePod(enforce, podParts(pod));
      if (violations.length === 0) continue;
      const reasons = violationReasons(violations);
      const name = pod.metadata.name ?? '';
      const seen = byReasons.get(reasons);
      if (!seen) byReasons.set(reasons, { name, count: 1 });
      else {
        seen.count++;
        if (name < seen.name) seen.name = name;
      }
    }
    const out: string[] = [];
    if (checked.length < all.length) out.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${all.length} existing pods`);
    if (byReasons.size === 0) return out;
    out.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
    const perPod = [...byReasons].map(([reasons, { name, count }]) => {
      const others = count === 1 ? '' : count === 2 ? ' (and 1 other pod)' : ` (and ${count - 1} other pods)`;
      return `${name}${others}: ${reasons}`;
    });
    return [...out, ...perPod.sort()];
  };

  const validateNamespace = (a: AdmissionAttributes): void => {
    if (a.subresource !== '' || !a.object) return;
    const ns = a.object;
    const name = ns.metadata.name ?? '';
    const labels = ns.metadata.labels ?? {};
    const next = policyFromLabels(labels, defaults);
    const refuse = (): never => {
      throw invalid('Namespace', '', name, next.errors);
    };
    const warnIfExempt = (): boolean => {
      if (!exemptNamespaces.has(name)) return false;
      const w = exemptNamespaceWarning(name, next.policy, labels);
      if (w) a.warn?.(w);
      return true;
    };
    if (a.operation === 'CREATE') {
      if (next.errors.length > 0) refuse();
      warnIfExempt();
      return;
    }
    const previous = policyFromLabels(a.oldObject?.metadata.labels ?? {}, defaults);
    // Labels that were already invalid, the same way, do not block other changes to the namespace.
    if (next.errors.length > 0 && (previous.errors.length === 0 || JSON.stringify(next.errors) !== JSON.stringify(previous.errors))) refuse();
    const enforce = next.policy.enforce;
    const before = previous.policy.enforce;
    if (sameLevelVersion(enforce, before) || enforce.level === 'privileged') return;
    if (enforce.version === before.version && compareLevels(enforce.level, before.level) < 1) return;
    if (warnIfExempt()) return;
    for (const w of existingPodWarnings(name, enforce)) a.warn?.(w);
  };

  return {
    name: 'PodSecurity',
    handles: (op, rt) => (op === 'CREATE' || op === 'UPDATE') && (isCore(rt, 'namespaces') || isCore(rt, 'pods') || isPodController(rt.group, rt.resource)),
    validate: (a) => {
      if (isCore(a.resource, 'pods')) return validatePod(a);
      if (isCore(a.resource, 'namespaces')) return validateNamespace(a);
      return validateController(a);
    },
  };
}
