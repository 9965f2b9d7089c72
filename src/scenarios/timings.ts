// Compressed time: every upstream default the node lifecycle depends on, divided by the run's
// --speed, as flags for the servers and agents a scenario starts. Both modes get the same clock,
// so what differs between them is behaviour, never timing. Each mode's own flags (the classic
// agent's) come with it.
import { formatDuration } from '../util/duration.js';
import type { Mode } from './timeline.js';

/** Upstream's defaults (kube-controller-manager, kubelet), in milliseconds or seconds as the flag takes them. */
const SERVER_DURATIONS: [flag: string, ms: number][] = [
  ['--node-monitor-period', 5_000],
  ['--node-monitor-grace-period', 50_000],
  ['--node-startup-grace-period', 60_000],
  ['--pod-gc-orphan-quarantine', 40_000],
  ['--pod-gc-period', 20_000],
  ['--leader-elect-lease-duration', 15_000],
  ['--leader-elect-renew-deadline', 10_000],
  ['--leader-elect-retry-period', 2_000],
];
const SERVER_SECONDS: [flag: string, s: number][] = [
  ['--default-not-ready-toleration-seconds', 300],
  ['--default-unreachable-toleration-seconds', 300],
];
const AGENT_DURATIONS: [flag: string, ms: number][] = [
  ['--node-status-update-frequency', 10_000],
  ['--node-status-report-frequency', 60_000],
];
const AGENT_SECONDS: [flag: string, s: number][] = [['--node-lease-duration-seconds', 40]];
/** cluster-autoscaler's defaults. */
const AUTOSCALER_DURATIONS: [flag: string, ms: number][] = [
  ['--scan-interval', 10_000],
  ['--max-node-provision-time', 15 * 60_000],
  ['--scale-down-unneeded-time', 10 * 60_000],
  ['--scale-down-delay-after-add', 10 * 60_000],
  ['--initial-node-group-backoff-duration', 5 * 60_000],
  ['--max-node-group-backoff-duration', 30 * 60_000],
];

/** Whole-second flags cannot go below one second; durations not below 100 ms. */
const scaledMs = (ms: number, speed: number) => formatDuration(Math.max(100, Math.round(ms / speed)));
const scaledS = (s: number, speed: number) => String(Math.max(1, Math.round(s / speed)));

export function serverTimingFlags(speed: number): string[] {
  return [...SERVER_DURATIONS.flatMap(([f, ms]) => [f, scaledMs(ms, speed)]), ...SERVER_SECONDS.flatMap(([f, s]) => [f, scaledS(s, speed)])];
}

export function autoscalerTimingFlags(speed: number): string[] {
  return AUTOSCALER_DURATIONS.flatMap(([f, ms]) => [f, scaledMs(ms, speed)]);
}

export function agentTimingFlags(speed: number): string[] {
  return [...AGENT_DURATIONS.flatMap(([f, ms]) => [f, scaledMs(ms, speed)]), ...AGENT_SECONDS.flatMap(([f, s]) => [f, scaledS(s, speed)])];
}

/** How the agents behave: skiff's defaults, or upstream's kubelet (never re-creates its Node, knows one server). */
export function agentModeFlags(mode: Mode): string[] {
  return mode === 'kubernetes' ? ['--reregister=false', '--endpoint-discovery=false'] : [];
}

/** How the autoscaler treats a machine left without a Node at its group's minimum: upstream keeps it. */
export function autoscalerModeFlags(mode: Mode): string[] {
  return mode === 'kubernetes' ? ['--force-delete-unregistered-nodes', 'false'] : [];
}
