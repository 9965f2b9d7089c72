// Helpers for Table cells, following upstream's printers (pkg/printers/internalversion): human
// durations, "<none>"/"<unknown>" placeholders, label and container summaries.
import type { TableColumn } from '../resource.js';
import { arr, obj, str, strMap } from './json.js';
import { humanDuration } from '../../util/human-duration.js';

export { humanDuration };

export function column(name: string, type: TableColumn['type'], description: string, priority: 0 | 1 = 0, format = ''): TableColumn {
  return { name, type, format, description, priority };
}

export const nameColumn = column('Name', 'string', 'Name of the object, unique within its namespace.', 0, 'name');
export const ageColumn = column('Age', 'string', 'Time since the object was created.');
/** The wide-output columns of every kind with a pod template. */
export const containersColumn = column('Containers', 'string', 'Names of each container in the template.', 1);
export const imagesColumn = column('Images', 'string', 'Images referenced by each container in the template.', 1);

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
