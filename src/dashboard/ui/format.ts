// Numbers as a person reads them on the page.

import { humanDuration } from '../../util/human-duration.js';

/** How long ago, as kubectl's AGE column prints it ("45s", "5m30s", "3h9m"); never negative. */
export function ago(ms: number): string {
  return humanDuration(Math.max(0, ms));
}

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 10 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

export function cores(milli: number): string {
  return milli % 1000 === 0 ? String(milli / 1000) : milli < 1000 ? `${milli}m` : (milli / 1000).toFixed(1);
}

export function percent(part: number, whole: number): number {
  return whole > 0 ? Math.min(100, Math.round((part / whole) * 100)) : 0;
}
