// Helpers for Table cells, following upstream's printers (pkg/printers/internalversion): human
// durations, "<none>"/"<unknown>" placeholders, label and container summaries.
import type { TableColumn } from '../resource.js';
import { arr, obj, str, strMap } from './json.js';

export function column(name: string, type: TableColumn['type'], description: string, priority: 0 | 1 = 0, format = ''): TableColumn {
  return { name, type, format, description, priority };
}

export const nameColumn = column('Name', 'string', 'Name of the object, unique within its namespace.', 0, 'name');
export const ageColumn = column('Age', 'string', 'Time since the object was created.');
/** The wide-output columns of every kind with a pod template. */
export const containersColumn = column('Containers', 'string', 'Names of each container in the template.', 1);
export const imagesColumn = column('Images', 'string', 'Images referenced by each container in the template.', 1);

/**
 * Upstream duration.HumanDuration: about two significant figures ("45s", "5m30s", "3h9m", "2d",
 * "5d3h", "3y120d"). Up to 2 s in the future still reads as "0s" to tolerate clock skew.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** Milliseconds since epoch of an RFC 3339 timestamp, or undefined when absent or unparseable. */
export function timestampMs(v: unknown): number | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Age since a timestamp as upstream's translateTimestampSince prints it; "<unknown>" when unset. */
export function since(v: unknown, now: number): string {
  const ms = timestampMs(v);
  return ms === undefined ? '<unknown>' : humanDuration(now - ms);
}

/** The Age cell of any object. */
export function age(o: { metadata?: { creationTimestamp?: unknown } }, now: number): string {
  return since(o.metadata?.creationTimestamp, now);
}

/** Upstream labels.FormatLabels: "k=v,k2=v2" sorted by key, "<none>" when empty. */
export function formatLabels(labels: unknown): string {
  const m = strMap(labels);
  const keys = Object.keys(m).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${m[k]}`).join(',');
}

export function orNone(s: string): string {
  return s === '' ? '<none>' : s;
}

/** Container names and images of a pod spec, each comma-joined (the wide Containers/Images cells). */
export function containerCells(podSpec: unknown): [string, string] {
  const containers = arr(obj(podSpec).containers).map(obj);
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(',')];
}

/** An int-or-string value as upstream's IntOrString.String() prints it. */
export function intOrStringText(v: unknown): string {
  if (typeof v === 'number') return String(v);
  return str(v);
}
