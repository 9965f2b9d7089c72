// How Go's fmt prints JSON values held in interface{} (maps, slices, float64 bounds), for messages
// that must read exactly as upstream's.

/** %v of a float64: shortest digits, exponent form from 1e+06 up and below 1e-04. */
export function goFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (n === 0) return '0';
  const [mantissa, expText] = n.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

/** A JSON number as Go holds it after decoding: int64 when integral (and in range), else float64. */
export function isGoInt(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}

export function goNumber(n: number): string {
  return isGoInt(n) ? String(n) : goFloat(n);
}

/** %#v of an interface{} JSON value: map[string]interface {}{"a":1}, []interface {}{"x"}. */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  const m = v as Record<string, unknown>;
  const entries = Object.keys(m)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${goSharpV(m[k])}`);
  return `map[string]interface {}{${entries.join(', ')}}`;
}

/** A bad value as field.Error prints it: %v for numbers and bools, %q for strings, %#v otherwise. */
export function goBadValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  return goSharpV(v);
}
