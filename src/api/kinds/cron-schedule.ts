// Schedule errors worded as upstream's (robfig/cron v3 ParseStandard, which the API server uses to
// validate CronJobs): "end of range (61) above maximum (59): 61". Validation is these checks alone,
// as upstream's; when a schedule fires is src/api/kinds/cronjob.ts's scheduleTimes.

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS = Object.fromEntries(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((m, i) => [m, i + 1]));
const DAYS = Object.fromEntries(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].map((d, i) => [d, i]));
const FIELDS: Bounds[] = [{ min: 0, max: 59 }, { min: 0, max: 23 }, { min: 1, max: 31 }, { min: 1, max: 12, names: MONTHS }, { min: 0, max: 6, names: DAYS }];
const DESCRIPTORS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

function parseIntStrict(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new Error(`failed to parse int from ${text}: strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  return Number(text);
}

function value(text: string, b: Bounds): number {
  const named = b.names?.[text.toLowerCase()];
  return named ?? parseIntStrict(text);
}

function checkPart(part: string, b: Bounds): void {
  const [range, step, ...extraSlash] = part.split('/');
  if (extraSlash.length > 0) throw new Error(`too many slashes: ${part}`);
  const bounds = range!.split('-');
  if (bounds.length > 2) throw new Error(`too many hyphens: ${part}`);
  let start: number;
  let end: number;
  if (range === '*' || range === '?') {
    start = b.min;
    end = b.max;
  } else {
    start = value(bounds[0]!, b);
    end = bounds.length === 2 ? value(bounds[1]!, b) : start;
  }
  if (step !== undefined) {
    const n = parseIntStrict(step);
    if (n <= 0) throw new Error(`step of range should be a positive number: ${part}`);
  }
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${part}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${part}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${part}`);
}

const DURATION_UNITS_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration: the duration in milliseconds, or its error. */
export function goDuration(text: string): number | { error: string } {
  const invalid = { error: `time: invalid duration ${JSON.stringify(text)}` };
  const sign = text.startsWith('-') ? -1 : 1;
  let rest = text.replace(/^[-+]/, '');
  if (rest === '0') return 0;
  if (rest === '') return invalid;
  let ms = 0;
  while (rest !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (m[0] === '' || m[0] === '.') return invalid;
    rest = rest.slice(m[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === '') return { error: `time: missing unit in duration ${JSON.stringify(text)}` };
    const scale = DURATION_UNITS_MS[unit];
    if (scale === undefined) return { error: `time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}` };
    ms += Number(`${m[1] || '0'}.${m[2] || '0'}`) * scale;
    rest = rest.slice(unit.length);
  }
  return sign * ms;
}

/**
 * robfig/cron's `@every <duration>` interval in milliseconds (Every: whole seconds, at least one),
 * or undefined for any other schedule. Assumes scheduleError accepted it.
 */
export function everyIntervalMs(schedule: string): number | undefined {
  const spec = schedule.trim();
  if (!spec.startsWith('@every ')) return undefined;
  const d = goDuration(spec.slice('@every '.length));
  if (typeof d !== 'number') return undefined;
  return Math.max(1000, d - (d % 1000));
}

/** Upstream's error for a schedule robfig/cron refuses, or undefined when it would accept it. */
export function scheduleError(schedule: string): string | undefined {
  const spec = schedule.trim();
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    if (spec.startsWith('@every ')) {
      const d = goDuration(spec.slice('@every '.length));
      return typeof d === 'number' ? undefined : `failed to parse duration ${spec}: ${d.error}`;
    }
    return `unrecognized descriptor: ${spec}`;
  }
  const fields = spec.split(/\s+/).filter((f) => f.length > 0);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  try {
    fields.forEach((f, i) => {
      for (const part of f.split(',')) checkPart(part, FIELDS[i]!);
    });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
