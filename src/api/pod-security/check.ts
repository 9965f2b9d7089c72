// What a Pod Security check is, and the small reading and wording helpers every check shares.
// Checks read the pod as JSON (it may be a controller's template), treating a field that is absent,
// null or of the wrong shape as unset, as the typed Go structs upstream reads would.
import { arr, isObject, type JsonObject } from '../kinds/json.js';
import type { Level, Version } from './policy.js';

/** The parts of a pod (or a controller's pod template) a check reads. */
export interface PodParts {
  annotations: Readonly<Record<string, string>>;
  spec: JsonObject;
}

/** Why a check refuses a pod: a short reason, always shown, and a detail naming what offends. */
export interface Violation {
  reason: string;
  detail: string;
}

/** undefined: the pod passes. */
export type CheckPod = (pod: PodParts) => Violation | undefined;

export interface VersionedCheck {
  /** The first policy version (1.NN) this form of the check applies to. */
  minimumVersion: Version;
  check: CheckPod;
  /** Baseline checks a restricted check replaces from this version on. */
  overrides?: readonly string[];
}

export interface Check {
  /** Upstream's check ID: it also orders the checks (and so the reasons in a message). */
  id: string;
  level: Exclude<Level, 'privileged'>;
  /** Oldest first. */
  versions: readonly VersionedCheck[];
}

/** Init containers, containers, then ephemeral containers: the order upstream visits them in. */
export function containersOf(spec: JsonObject): JsonObject[] {
  const out: JsonObject[] = [];
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) for (const c of arr(spec[key])) if (isObject(c)) out.push(c);
  return out;
}

/** An object-valued field, or undefined when it is unset (or not an object). */
export function field(o: JsonObject | undefined, key: string): JsonObject | undefined {
  const v = o?.[key];
  return isObject(v) ? v : undefined;
}

export function securityContextOf(o: JsonObject): JsonObject | undefined {
  return field(o, 'securityContext');
}

export function nameOf(c: JsonObject): string {
  return typeof c.name === 'string' ? c.name : '';
}

/** Windows pods are exempt from some restricted checks from 1.25 (their fields do not apply there). */
export function isWindowsPod(spec: JsonObject): boolean {
  return field(spec, 'os')?.name === 'windows';
}

/** `"a", "b"`: names quoted and joined as upstream's messages show them. */
export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** `pod`, `containers "a", "b"`: who set a forbidden value, pod first (a message joins them with " and "). */
export function setters(pod: boolean, containers: readonly string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (containers.length > 0) out.push(containersPhrase(containers));
  return out;
}

/** A set's members sorted by code unit, as Go's sorted string sets list them. */
export function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(byCodeUnit);
}

export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
