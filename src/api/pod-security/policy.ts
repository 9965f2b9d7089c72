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

type Mode = keyof Policy;

/** Each mode's labels, and the level an unparsable level label evaluates as. */
const MODES: readonly { mode: Mode; levelLabel: string; versionLabel: string; invalidLevel: Level }[] = [
  // Enforce fails closed; audit and warn fail open (a typo must not flood or silence anything).
  { mode: 'enforce', levelLabel: ENFORCE_LABEL, versionLabel: ENFORCE_VERSION_LABEL, invalidLevel: 'restricted' },
  { mode: 'audit', levelLabel: AUDIT_LABEL, versionLabel: AUDIT_VERSION_LABEL, invalidLevel: 'privileged' },
  { mode: 'warn', levelLabel: WARN_LABEL, versionLabel: WARN_VERSION_LABEL, invalidLevel: 'privileged' },
];

/**
 * The policy a namespace's labels ask for, the defaults filling what they leave out. A label that
 * does not parse still yields a policy (enforce evaluates as restricted, audit and warn as
 * privileged, a version as latest) and a cause. Warn follows an explicitly set, stricter enforce
 * level when warn itself is not labelled, so a refusal's reasons reach controllers' templates too.
 */
export function policyFromLabels(labels: Readonly<Record<string, string>> | undefined, defaults: Policy): EvaluatedPolicy {
  const errors: StatusCause[] = [];
  if (!labels) return { policy: defaults, errors };
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const bad = (label: string, value: string, error: string | undefined): void => {
    if (error) errors.push(invalidRendered(keyPath('metadata.labels', label), JSON.stringify(value), error));
  };
  let enforceLevelValid = false;
  for (const { mode, levelLabel, versionLabel, invalidLevel } of MODES) {
    const level = labels[levelLabel];
    if (level !== undefined) {
      const r = parseLevel(level);
      policy[mode].level = r.error ? invalidLevel : r.level;
      if (mode === 'enforce') enforceLevelValid = r.error === undefined;
      bad(levelLabel, level, r.error);
    }
    const version = labels[versionLabel];
    if (version !== undefined) {
      const r = parseVersion(version);
      policy[mode].version = r.version;
      bad(versionLabel, version, r.error);
    }
  }
  if (labels[WARN_LABEL] === undefined && enforceLevelValid && compareLevels(policy.enforce.level, policy.warn.level) > 0) {
    policy.warn.level = policy.enforce.level;
    if (labels[WARN_VERSION_LABEL] === undefined) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}

/** Whether any label is one of Pod Security's (the common case, none, decides everything at once). */
export function hasPodSecurityLabels(labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!labels) return false;
  for (const k in labels) if (k.startsWith(LABEL_PREFIX)) return true;
  return false;
}
