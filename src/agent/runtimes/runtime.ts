import type { ObjectMeta } from '../../api/types.js';
import type { Container, Pod } from '../../api/kinds/pod.js';
import type { ImageStore } from '../image-gc.js';

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
  /** argv: command followed by args (the process runtime's whole command line). */
  argv: string[];
  /** command and args as the pod says them, $(VAR) expanded: an image runtime combines them with the image's entrypoint and cmd. */
  command: string[];
  args: string[];
  env: Record<string, string>;
  workingDir?: string;
  logPath: string;
  /** The pod's metadata, for a runtime whose behaviour depends on the pod (the simulated runtime's stages). */
  podMeta?: Pick<ObjectMeta, 'labels' | 'annotations' | 'namespace' | 'ownerReferences'>;
  /** The whole pod and container, for a runtime that builds a sandbox and a container from them. */
  pod?: Pod;
  container?: Container;
  /** The container's volumes (runtimes whose containers have their own filesystem). */
  mounts?: ContainerMount[];
}

/** A directory or file of the node the runtime makes visible in the container. */
export interface ContainerMount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
}

/** What an agent restarting finds accounted for in its pod records: anything else of its own is an orphan. */
export interface KnownInstances {
  /** Process groups of recorded running instances (the process runtime). */
  pids: Set<number>;
  /** Recorded instance ids, running or not. */
  ids: Set<string>;
  /** Pods the agent still has records of. */
  podUids: Set<string>;
}

/** Persisted facts about a running instance, enough for a later agent to adopt it. */
export interface InstanceRecord {
  id: string;
  pid?: number;
  /** /proc/<pid>/stat start time (clock ticks since boot): guards against pid reuse. */
  startTicks?: number;
  startedAt: number;
  logPath: string;
  /** The image it runs as the runtime names it (a digest): status.containerStatuses[].imageID. */
  imageRef?: string;
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

/** Which standard streams a client wants joined (exec, attach). */
export interface StdStreams {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** A stream kubectl opens into a pod, which a runtime with a streaming server serves at a URL. */
export type StreamRequest =
  | { kind: 'exec'; instanceId: string; command: string[]; streams: StdStreams }
  | { kind: 'attach'; instanceId: string; streams: StdStreams }
  | { kind: 'portforward'; podUid: string; ports: number[] };

/** A running instance whose resource usage is asked for. */
export interface UsageQuery {
  id: string;
  /** Its process group (the process runtime). */
  pid?: number;
  startedAt: number;
  /** Pod uid and container name: stable for the container (the simulated runtime's figures). */
  key: string;
  /** The container's resource requests (the simulated runtime's figures). */
  requests?: Record<string, string | number>;
}

/** An instance's cumulative CPU and current memory, as the runtime read them. */
export interface InstanceUsage {
  timestampMs: number;
  cpuCoreNanoSeconds: number;
  memoryWorkingSetBytes: number;
  memoryUsageBytes?: number;
  rssBytes?: number;
}

/** The runtimes an agent can run pods with. */
export type RuntimeName = 'process' | 'simulated' | 'containerd';

/** How a runtime's log files carry the time of each line (see Runtime.logFormat). */
export type LogFormat = 'cri' | 'marked';

export interface Runtime {
  readonly name: RuntimeName;
  /** containerID prefix in pod status, e.g. "skiff-process". */
  readonly idScheme: string;
  /** Containers run from their images: their environment starts from the image's, their files are their own. */
  readonly images?: boolean;
  /**
   * Log files are in the CRI format (a timestamp, stream and tag per line), or raw output with
   * marks of when it grew beside them (log-times.ts); absent: raw output, no times.
   */
  readonly logFormat?: LogFormat;
  /** Readies what the pod's containers share (a sandbox and its network) before the first starts; throws CreateContainerError. */
  prepare?(pod: Pod): Promise<void>;
  /** Starts an instance. Throws CreateContainerError when the spec cannot run here. */
  start(launch: ContainerLaunch): Promise<RunningContainer>;
  /** SIGTERM (or equivalent), then SIGKILL after graceMs; resolves when the instance has ended. */
  stop(c: RunningContainer, graceMs: number): Promise<ExitInfo>;
  /** Re-attaches to an instance a previous agent started; undefined when it can no longer be found. */
  adopt(record: InstanceRecord): Promise<RunningContainer | undefined>;
  /** Kills what an earlier agent started that no pod record accounts for; says how many. */
  reapOrphans(known: KnownInstances): Promise<number>;
  /** The pod's own IP once its sandbox has one (runtimes with pod networking); undefined: the node's. */
  podIP?(podUid: string): string | undefined;
  /** Runs a probe's command inside a running instance (runtimes with their own filesystem view). */
  exec?(instanceId: string, argv: string[], timeoutMs: number): Promise<{ ok: boolean; output?: string }>;
  /** The node's pod CIDR (spec.podCIDR), for a runtime whose pod network is made from it. */
  setPodCidr?(cidr: string): Promise<void>;
  /** The runtime's images, for image garbage collection (runtimes that keep images). */
  readonly imageStore?: ImageStore;
  /** Why the runtime cannot run pods now (down, network not ready); undefined when it can. */
  health?(): Promise<string | undefined>;
  /** Where the runtime serves an exec, attach or port-forward (a one-time URL the agent relays the client's upgrade to). */
  streamUrl?(req: StreamRequest): Promise<string>;
  /** CPU and memory of running instances, by instance id; an instance it could not read is left out. */
  usage?(instances: readonly UsageQuery[]): Promise<Map<string, InstanceUsage>>;
  /** Every container of the pod has stopped for good: release what the pod holds (its sandbox, its IP). */
  stopPod?(podUid: string): Promise<void>;
  /** The pod is forgotten: remove whatever is left of it. */
  removePod?(podUid: string): Promise<void>;
  close(): void;
}

export const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };
