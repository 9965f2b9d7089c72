import type { ObjectMeta } from '../../api/types.js';

// What pod sync needs from a container runtime: start one container instance, stop it within a
// grace period, and — after an agent restart — adopt instances a previous agent started. Pod-level
// policy (restarts, back-off, status) lives in pod sync; a runtime only runs things.

/** How a container instance ended. */
export interface ExitInfo {
  exitCode: number;
  /** Signal number when killed by one. */
  signal?: number;
  /** Upstream-like: Completed, Error, StartError, ContainerStatusUnknown. */
  reason: string;
  message?: string;
  finishedAt: number;
}

export interface ContainerLaunch {
  podUid: string;
  namespace: string;
  podName: string;
  containerName: string;
  /** 0 for the first instance, restartCount after that; names the log file. */
  instance: number;
  /** argv: command followed by args. */
  argv: string[];
  env: Record<string, string>;
  workingDir?: string;
  logPath: string;
  /** The pod's metadata, for a runtime whose behaviour depends on the pod (the simulated runtime's stages). */
  podMeta?: Pick<ObjectMeta, 'labels' | 'annotations' | 'namespace' | 'ownerReferences'>;
}

/** Persisted facts about a running instance, enough for a later agent to adopt it. */
export interface InstanceRecord {
  id: string;
  pid?: number;
  /** /proc/<pid>/stat start time (clock ticks since boot): guards against pid reuse. */
  startTicks?: number;
  startedAt: number;
  logPath: string;
}

export interface RunningContainer {
  record: InstanceRecord;
  /** Resolves once when the instance has ended. */
  exited: Promise<ExitInfo>;
}

/** The container cannot be created on this runtime (a Waiting reason and message, not a crash). */
export class CreateContainerError extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

export interface Runtime {
  readonly name: 'process' | 'simulated';
  /** containerID prefix in pod status, e.g. "skiff-process". */
  readonly idScheme: string;
  /** Starts an instance. Throws CreateContainerError when the spec cannot run here. */
  start(launch: ContainerLaunch): Promise<RunningContainer>;
  /** SIGTERM (or equivalent), then SIGKILL after graceMs; resolves when the instance has ended. */
  stop(c: RunningContainer, graceMs: number): Promise<ExitInfo>;
  /** Re-attaches to an instance a previous agent started; undefined when it is no longer running. */
  adopt(record: InstanceRecord): RunningContainer | undefined;
  /** Kills processes started by an earlier agent that no pod record accounts for. */
  reapOrphans(known: Set<number>): Promise<number>;
  close(): void;
}

export const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };
