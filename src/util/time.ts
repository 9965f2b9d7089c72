// Times as Kubernetes writes them: metav1.Time (RFC 3339, whole seconds, UTC) and metav1.MicroTime
// (the same with microseconds, as Leases and events.k8s.io write it).

let last: { second: number; text: string } | undefined;

/** `ms` (epoch milliseconds) as metav1.Time is written, e.g. 2026-11-30T04:00:00Z. */
export function rfc3339(ms: number): string {
  // Every write stamps a time and the same second repeats thousands of times: format it once.
  const second = Math.floor(ms / 1000);
  if (last?.second !== second) last = { second, text: new Date(second * 1000).toISOString().replace('.000Z', 'Z') };
  return last.text;
}

/**
 * `ms` as metav1.MicroTime is written, e.g. 2026-11-30T04:00:00.123000Z. A fraction of `ms` (from
 * performance.now(), as audit events are stamped) gives the last three digits; whole ms give 000.
 */
export function microTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  return `${new Date(whole).toISOString().slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
}

/** `ms` as RFC 3339 with nanoseconds (Go's RFC3339Nano, fixed width), as the kubelet times log lines. */
export function nanoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}
