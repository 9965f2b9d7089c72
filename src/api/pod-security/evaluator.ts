// Which checks a level at a policy version runs, in upstream's order, and how their findings are
// worded together. The lists are worked out once per level and version and kept.
import { BASELINE_CHECKS } from './baseline.js';
import { byCodeUnit, type Check, type CheckPod, type PodParts, type Violation, type VersionedCheck } from './check.js';
import type { LevelVersion, Version } from './policy.js';
import { RESTRICTED_CHECKS } from './restricted.js';

const ALL_CHECKS: readonly Check[] = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS];

/** The newest version any check changes at: later versions (and latest) evaluate as this one. */
export const NEWEST_POLICY_VERSION: Version = Math.max(...ALL_CHECKS.flatMap((c) => c.versions.map((v) => v.minimumVersion)));

/** The form of a check at a version; undefined before the check existed. */
function formAt(check: Check, version: Version): VersionedCheck | undefined {
  let found: VersionedCheck | undefined;
  for (const v of check.versions) if (v.minimumVersion <= version) found = v;
  return found;
}

/** Baseline checks first, then restricted, each group by ID: the order reasons appear in a message. */
const ORDERED = [...ALL_CHECKS].sort((a, b) => (a.level === b.level ? byCodeUnit(a.id, b.id) : a.level === 'baseline' ? -1 : 1));

function checksFor(level: 'baseline' | 'restricted', version: Version): CheckPod[] {
  const forms = ORDERED.map((c) => ({ c, form: formAt(c, version) })).filter((f) => f.form && (level === 'restricted' || f.c.level === 'baseline'));
  const overridden = new Set(forms.flatMap((f) => (f.c.level === 'restricted' ? (f.form!.overrides ?? []) : [])));
  return forms.filter((f) => !overridden.has(f.c.id)).map((f) => f.form!.check);
}

const cache = new Map<string, readonly CheckPod[]>();

/** Every violation of the pod against a level at a version, in message order (none for privileged). */
export function evaluatePod(lv: LevelVersion, pod: PodParts): Violation[] {
  if (lv.level === 'privileged') return [];
  const version = Math.min(lv.version, NEWEST_POLICY_VERSION);
  const key = `${lv.level}:${version}`;
  let checks = cache.get(key);
  if (!checks) cache.set(key, (checks = checksFor(lv.level, version)));
  const out: Violation[] = [];
  for (const check of checks) {
    const v = check(pod);
    if (v) out.push(v);
  }
  return out;
}

/** `reason (detail), reason`: what a refusal or a warning about one pod says. */
export function violationDetail(violations: readonly Violation[]): string {
  return violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
}

/** `reason, reason`: what a warning about existing pods says (details would differ pod by pod). */
export function violationReasons(violations: readonly Violation[]): string {
  return violations.map((v) => v.reason).join(', ');
}
