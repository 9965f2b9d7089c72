// How resource metrics are spelled on the wire, as metrics-server spells them: CPU as a quantity
// of nanocores ("123456n", canonicalised: "2m" when whole millicores), memory as a binary quantity
// of bytes ("1234Ki"), a window as Go prints a time.Duration ("15.003s", "1m0.5s").
import { canonicalQuantity } from '../api/quantity.js';

/** CPU usage in nanocores as a quantity ("123456n"; "0" when idle). */
export function cpuQuantity(nanoCores: number): string {
  return canonicalQuantity(BigInt(Math.max(0, Math.round(nanoCores))), 'DecimalSI');
}

/** Memory in bytes as a binary quantity ("1234Ki" for whole KiB, else bytes). */
export function memoryQuantity(bytes: number): string {
  return canonicalQuantity(BigInt(Math.max(0, Math.round(bytes))) * 1_000_000_000n, 'BinarySI');
}

/** A duration in milliseconds as Go's time.Duration.String() prints it (metav1.Duration's JSON). */
export function goDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.round(Math.abs(ms) * 1000); // microseconds: enough for a window
  if (rest < 1000) return `${sign}${rest}µs`;
  if (rest < 1_000_000) return `${sign}${trimFraction(rest, 1000)}ms`;
  const hours = Math.floor(rest / 3_600_000_000);
  rest -= hours * 3_600_000_000;
  const minutes = Math.floor(rest / 60_000_000);
  rest -= minutes * 60_000_000;
  const seconds = `${trimFraction(rest, 1_000_000)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

/** value/unit with the fraction's trailing zeros dropped ("15.003", "15"). */
function trimFraction(value: number, unit: number): string {
  const whole = Math.floor(value / unit);
  const frac = value % unit;
  if (frac === 0) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}
