// The names both DNS servers of the dns suite hold: svc-<i>.default.svc.cluster.local → 10.96.x.y.
export function benchServiceIp(i: number): string {
  return `10.96.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

export function benchServiceName(i: number): string {
  return `svc-${i}.default.svc.cluster.local`;
}
