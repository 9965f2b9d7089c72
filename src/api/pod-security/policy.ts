// Pod Security Standards: the three levels, policy versions, and what a namespace's
// `pod-security.kubernetes.io/*` labels ask for (upstream's pod-security-admission api package).
import { invalidRendered, keyPath } from '../validation.js';
import type { StatusCause } from '../types.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/**
 * A policy version: the minor of `v1.NN`, or `LATEST`. Latest is newer than any numbered version
 * (even a future one), which Infinity gives for free in comparisons.
 */
export type Version = number;
export const LATEST: Version = Number.POSITIVE_INFINITY;

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const ENFORCE_LABEL = `${LABEL_PREFIX}enforce`;
export const ENFORCE_VERSION_LABEL = `${LABEL_PREFIX}enforce-version`;
export const AUDIT_LABEL = `${LABEL_PREFIX}audit`;
export const AUDIT_VERSION_LABEL = `${LABEL_PREFIX}audit-version`;
export const WARN_LABEL = `${LABEL_PREFIX}warn`;
export const WARN_VERSION_LABEL = `${LABEL_PREFIX}warn-version`;

export function versionString(v: Version): string {
  return v === LATEST ? 'latest' : `v1.${v}`;
}

/** `restricted:latest`, `baseline:v1.25`: how messages name a level at a version. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

/** An unknown level evaluates as restricted (the strictest), as upstream's ParseLevel answers. */
export function parseLevel(text: string): { level: Level; error?: string } {
  if ((LEVELS as readonly string[]).includes(text)) return { level: text as Level };
  return { level: 'restricted', error: `must be one of ${LEVELS.join(', ')}` };
}

const VERSION = /^v1\.([0-9]|[1-9][0-9]*)$/;

/** `latest` or `v1.NN`; anything else evaluates as latest. */
export function parseVersion(text: string): { version: Version; error?: string } {
  if (text === 'latest') return { version: LATEST };
  const m = VERSION.exec(text);
  const minor = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(minor)) return { version: LATEST, error: 'must be "latest" or "v1.x"' };
  return { version: minor };
}

/** -1, 0 or 1 as level a is less, as, or more strict than b. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

export function isFullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && a.version === b.version;
}

/** Both privileged (at whatever version), or the same level at the same version. */
export function equivalentLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
}

export interface EvaluatedPolicy {
  policy: Policy;
  /** One cause per label that does not parse, in upstream's field-error wording. */
  errors: StatusCause[];
}

/**
 * The policy a namespace's labels ask for, the defaults filling what they leave out. A label that
 * does not parse still yields a policy (enforce fails closed to restricted, audit and warn fail open
 * to privileged, a version to latest) and a cause. Warn follows an explicitly set, stricter enforce
 * level when warn itself is not labelled, so a refusal's reasons reach controllers' templates too.
 */
export function policyFromLabels(labels: Readonly<Record<string, string>> | undefined, defaults: Policy): EvaluatedPolicy {
  const errors: StatusCause[] = [];
  if (!labels) return { policy: defaults, errors };
  const enforce = { ...defaults.enforce };
  const audit = { ...defaults.audit };
  const warn = { ...defaults.warn };
  const bad = (label: string, value: string, error: string | undefined): void => {
    if (error) errors.push(invalidRendered(keyPath('metadata.labels', label), JSON.stringify(value), error));
  };
  let hasEnforceLevel = false;
  const enforceLevel = labels[ENFORCE_LABEL];
  if (enforceLevel !== undefined) {
    const r = parseLevel(enforceLevel);
    enforce.level = r.level;
    hasEnforceLevel = r.error === undefined;
    bad(ENFORCE_LABEL, enforceLevel, r.error);
  }
  const enforceVersion = labels[ENFORCE_VERSION_LABEL];
  if (enforceVersion !== undefined) {
    const r = parseVersion(enforceVersion);
    enforce.version = r.version;
    bad(ENFORCE_VERSION_LABEL, enforceVersion, r.error);
  }
  const auditLevel = labels[AUDIT_LABEL];
  if (auditLevel !== undefined) {
    const r = parseLevel(auditLevel);
    audit.level = r.error ? 'privileged' : r.level;
    bad(AUDIT_LABEL, auditLevel, r.error);
  }
  const auditVersion = labels[AUDIT_VERSION_LABEL];
  if (auditVersion !== undefined) {
    const r = parseVersion(auditVersion);
    audit.version = r.version;
    bad(AUDIT_VERSION_LABEL, auditVersion, r.error);
  }
  const warnLevel = labels[WARN_LABEL];
  if (warnLevel !== undefined) {
    const r = parseLevel(warnLevel);
    warn.level = r.error ? 'privileged' : r.level;
    bad(WARN_LABEL, warnLevel, r.error);
  }
  const warnVersion = labels[WARN_VERSION_LABEL];
  if (warnVersion !== undefined) {
    const r = parseVersion(warnVersion);
    warn.version = r.version;
    bad(WARN_VERSION_LABEL, warnVersion, r.error);
  }
  if (warnLevel === undefined && hasEnforceLevel && compareLevels(enforce.level, warn.level) > 0) {
    warn.level = enforce.level;
    if (warnVersion === undefined) warn.version = enforce.version;
  }
  return { policy: { enforce, audit, warn }, errors };
}

/** Whether any label is one of Pod Security's (the common case, none, decides everything at once). */
export function hasPodSecurityLabels(labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!labels) return false;
  for (const k in labels) if (k.startsWith(LABEL_PREFIX)) return true;
  return false;
}
