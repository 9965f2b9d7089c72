// Kubernetes resource quantities ("100m", "1Gi", "2", "1e3"). Values are kept as an exact decimal
// mantissa times powers of ten and two, so "0.1" CPU is exactly 100 millicores (floats would round
// 0.1 * 1000 up to 101 when taking the ceiling as upstream does).

export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface ParsedQuantity {
  /** Signed decimal digits of the number part, without the point. */
  mantissa: bigint;
  /** value = mantissa * 10^exp10 * 2^exp2 */
  exp10: number;
  exp2: number;
  format: QuantityFormat;
}

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SHAPE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

/** Parses a quantity (string, or a bare JSON number as upstream also accepts); throws with upstream's message. */
export function parseQuantityExact(input: string | number): ParsedQuantity {
  const text = typeof input === 'number' ? numberText(input) : input.trim();
  const m = SHAPE.exec(text);
  if (!m) throw new Error(QUANTITY_FORMAT_ERROR);
  const numberPart = m[1]!;
  const suffix = m[2]!;
  const numMatch = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(numberPart);
  if (!numMatch || (numMatch[2]! + (numMatch[3] ?? '')).length === 0) throw new Error(QUANTITY_FORMAT_ERROR);
  const sign = numMatch[1] === '-' ? -1n : 1n;
  const whole = numMatch[2]!;
  const frac = numMatch[3] ?? '';
  const mantissa = sign * BigInt((whole + frac).replace(/^0+(?=\d)/, '') || '0');
  let exp10 = -frac.length;
  let exp2 = 0;
  let format: QuantityFormat;
  if (suffix in BINARY_SUFFIXES) {
    exp2 = BINARY_SUFFIXES[suffix]!;
    format = 'BinarySI';
  } else if (suffix in DECIMAL_SUFFIXES) {
    exp10 += DECIMAL_SUFFIXES[suffix]!;
    format = 'DecimalSI';
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    exp10 += Number(suffix.slice(1));
    format = 'DecimalExponent';
  } else {
    throw new Error(QUANTITY_SUFFIX_ERROR);
  }
  return { mantissa, exp10, exp2, format };
}

function numberText(n: number): string {
  if (!Number.isFinite(n)) return 'NaN';
  // JSON numbers like 1e-7 print in exponent form, which the grammar accepts as a suffix.
  return String(n);
}

/** Upstream's validation messages for a quantity, empty when valid. */
export function quantityErrors(input: unknown): string[] {
  if (typeof input !== 'string' && typeof input !== 'number') return [QUANTITY_FORMAT_ERROR];
  try {
    parseQuantityExact(input);
    return [];
  } catch (e) {
    return [(e as Error).message];
  }
}

export function isValidQuantity(input: unknown): boolean {
  return quantityErrors(input).length === 0;
}

/** Numeric value in base units (cores, bytes, pods...). Throws on malformed input. */
export function parseQuantity(input: string | number): number {
  const q = parseQuantityExact(input);
  return Number(`${q.mantissa}e${q.exp10}`) * 2 ** q.exp2;
}

/** Value in thousandths of the base unit, rounded up like upstream's MilliValue (e.g. "100m" → 100, "1" → 1000). */
export function milliValue(input: string | number): number {
  return Number(scaledCeil(parseQuantityExact(input), 3));
}

/** Value rounded up to a whole base unit, like upstream's Value() (e.g. "1Gi" → 1073741824, "100m" → 1). */
export function integerValue(input: string | number): number {
  return Number(scaledCeil(parseQuantityExact(input), 0));
}

/** ceil(value * 10^scale) as an exact integer, e.g. scale 9 for nano-units (exact sums and comparisons). */
export function scaledValue(input: string | number, scale: number): bigint {
  return scaledCeil(parseQuantityExact(input), scale);
}

function scaledCeil(q: ParsedQuantity, scale: number): bigint {
  let numerator = q.mantissa;
  let denominator = 1n;
  const e10 = q.exp10 + scale;
  if (e10 >= 0) numerator *= 10n ** BigInt(e10);
  else denominator *= 10n ** BigInt(-e10);
  if (q.exp2 >= 0) numerator *= 2n ** BigInt(q.exp2);
  else denominator *= 2n ** BigInt(-q.exp2);
  const quotient = numerator / denominator;
  const exact = quotient * denominator === numerator;
  return !exact && numerator > 0n ? quotient + 1n : quotient;
}

/** -1, 0 or 1 as a is less than, equal to or greater than b; compared exactly. */
export function compareQuantities(a: string | number, b: string | number): -1 | 0 | 1 {
  const qa = parseQuantityExact(a);
  const qb = parseQuantityExact(b);
  // Bring both to a common integer scale: multiply by enough powers of 10 and 2.
  const e10 = Math.min(qa.exp10, qb.exp10);
  const e2 = Math.min(qa.exp2, qb.exp2);
  const va = qa.mantissa * 10n ** BigInt(qa.exp10 - e10) * 2n ** BigInt(qa.exp2 - e2);
  const vb = qb.mantissa * 10n ** BigInt(qb.exp10 - e10) * 2n ** BigInt(qb.exp2 - e2);
  return va < vb ? -1 : va > vb ? 1 : 0;
}

/** Sign of a quantity: -1, 0 or 1. */
export function quantitySign(input: string | number): -1 | 0 | 1 {
  const m = parseQuantityExact(input).mantissa;
  return m < 0n ? -1 : m > 0n ? 1 : 0;
}

/** The quantity as text, as it appears on the wire (numbers keep their JSON spelling). */
export function quantityText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (typeof input === 'number') return numberText(input);
  return '';
}

const DECIMAL_SUFFIX_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_SUFFIX_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]));
const NANOS_PER_UNIT = 1_000_000_000n;

/**
 * Upstream's canonical spelling (Quantity.String()) of a value given in nano-units and the format
 * it was written in: the largest decimal suffix that keeps the number whole ("1500m", "2k"), a
 * binary suffix for whole multiples of 1024 written in binary ("1536Mi"; "1.5Ki" prints "1536"),
 * and exponents in steps of three for exponent notation.
 */
export function canonicalQuantity(nanos: bigint, format: QuantityFormat): string {
  if (nanos === 0n) return '0';
  const sign = nanos < 0n ? '-' : '';
  const magnitude = nanos < 0n ? -nanos : nanos;
  if (format === 'BinarySI' && magnitude >= 1024n * NANOS_PER_UNIT && magnitude % NANOS_PER_UNIT === 0n) {
    let mantissa = magnitude / NANOS_PER_UNIT;
    let exp2 = 0;
    while (exp2 < 60 && mantissa % 1024n === 0n) {
      mantissa /= 1024n;
      exp2 += 10;
    }
    return `${sign}${mantissa}${BINARY_SUFFIX_BY_EXPONENT.get(exp2) ?? ''}`;
  }
  let mantissa = magnitude;
  let exp10 = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp10++;
  }
  // Back down to a multiple of three, as the suffixes (and exponent form) step in thousands.
  const over = ((exp10 % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(over);
  exp10 -= over;
  if (format === 'DecimalExponent') return `${sign}${mantissa}${exp10 === 0 ? '' : `e${exp10}`}`;
  const suffix = DECIMAL_SUFFIX_BY_EXPONENT.get(exp10);
  return `${sign}${mantissa}${suffix ?? `e${exp10}`}`;
}

/** The canonical spelling of a quantity as written ("1000m" → "1", "2048Ki" → "2Mi"). Throws on malformed input. */
export function canonicalQuantityText(input: string | number): string {
  const q = parseQuantityExact(input);
  return canonicalQuantity(scaledCeil(q, 9), q.format);
}
