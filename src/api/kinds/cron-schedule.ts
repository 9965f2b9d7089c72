// Schedule errors worded as upstream's (robfig/cron v3 ParseStandard, which the API server uses to
// validate CronJobs): "end of range (61) above maximum (59): 61". cron-parser then reads the
// schedules this accepts; anything it still refuses is reported in its own words.

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

const DURATION_UNITS = new Set(['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h']);

/** Go's time.ParseDuration error for text, or undefined when it reads as a duration. */
function goDurationError(text: string): string | undefined {
  const invalid = `time: invalid duration ${JSON.stringify(text)}`;
  let rest = text.replace(/^[-+]/, '');
  if (rest === '0') return undefined;
  if (rest === '') return invalid;
  while (rest !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    if (m[0] === '' || m[0] === '.') return invalid;
    rest = rest.slice(m[0].length);
    const unit = /^[^\d.]*/.exec(rest)![0];
    if (unit === '') return `time: missing unit in duration ${JSON.stringify(text)}`;
    if (!DURATION_UNITS.has(unit)) return `time: unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)}`;
    rest = rest.slice(unit.length);
  }
  return undefined;
}

/** Upstream's error for a schedule robfig/cron refuses, or undefined when it would accept it. */
export function scheduleError(schedule: string): string | undefined {
  const spec = schedule.trim();
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    if (spec.startsWith('@every ')) {
      const problem = goDurationError(spec.slice('@every '.length));
      return problem === undefined ? undefined : `failed to parse duration ${spec}: ${problem}`;
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
