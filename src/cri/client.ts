// A CRI v1 client: the calls the agent makes to a container runtime (containerd's CRI plugin) over
// its gRPC socket. Each call has a deadline, so a hung runtime shows up as an error the agent can
// report, never as a pod sync that waits forever.
import grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { Root, Type } from 'protobufjs';
import {
  CRI_PACKAGE,
  CRI_PROTO,
  type AuthConfig,
  type Container,
  type ContainerConfig,
  type ContainerState,
  type ContainerStatus,
  type Image,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxState,
  type PodSandboxStatus,
  type RuntimeCondition,
  type ContainerStats,
} from './messages.js';

let root: Root | undefined;
function schema(): Root {
  if (!root) {
    root = protobuf.parse(CRI_PROTO, { keepCase: false }).root;
    root.resolveAll();
  }
  return root;
}

/** A failed CRI call: the gRPC status code and the runtime's own message. */
export class CriError extends Error {
  constructor(readonly method: string, readonly code: number, readonly details: string) {
    super(`${method}: ${details || grpc.status[code] || `gRPC status ${code}`}`);
  }

  get notFound(): boolean {
    return this.code === grpc.status.NOT_FOUND || /not found|does not exist/i.test(this.details);
  }
}

export interface CriClientOptions {
  /** unix:///run/containerd/containerd.sock, or a bare socket path. */
  endpoint: string;
  /** Deadline of an ordinary call; image pulls get pullTimeoutMs. */
  timeoutMs?: number;
  pullTimeoutMs?: number;
}

const DECODE = { longs: String, enums: String, bytes: Buffer, defaults: true, arrays: true, objects: true } as const;

/** The endpoint as gRPC's target: "unix:///path". */
export function criTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix://${endpoint.slice('unix://'.length).replace(/^\/*/, '/')}`;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  return endpoint;
}

export class CriClient {
  private readonly client: grpc.Client;
  private readonly timeoutMs: number;
  private readonly pullTimeoutMs: number;

  constructor(o: CriClientOptions) {
    this.client = new grpc.Client(criTarget(o.endpoint), grpc.credentials.createInsecure(), {
      // containerd answers large lists (many containers) in one message.
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
    });
    this.timeoutMs = o.timeoutMs ?? 2 * 60_000;
    this.pullTimeoutMs = o.pullTimeoutMs ?? 15 * 60_000;
  }

  close(): void {
    this.client.close();
  }

  private call<T>(service: 'RuntimeService' | 'ImageService', method: string, request: object, timeoutMs = this.timeoutMs): Promise<T> {
    const s = schema();
    const reqType: Type = s.lookupType(`${CRI_PACKAGE}.${method}Request`);
    const resType: Type = s.lookupType(`${CRI_PACKAGE}.${method}Response`);
    const path = `/${CRI_PACKAGE}.${service}/${method}`;
    return new Promise<T>((resolve, reject) => {
      this.client.makeUnaryRequest(
        path,
        (v: object) => Buffer.from(reqType.encode(reqType.fromObject(v)).finish()),
        (b: Buffer) => resType.toObject(resType.decode(b), DECODE) as T,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err, value) => {
          if (err) reject(new CriError(method, err.code ?? grpc.status.UNKNOWN, err.details ?? err.message));
          else resolve(value as T);
        },
      );
    });
  }

  // --- runtime -------------------------------------------------------------------------------

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    return this.call('RuntimeService', 'Version', { version: 'v1' }, 10_000);
  }

  async status(): Promise<RuntimeCondition[]> {
    const r = await this.call<{ status?: { conditions: RuntimeCondition[] } }>('RuntimeService', 'Status', {}, 10_000);
    return r.status?.conditions ?? [];
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    return (await this.call<{ podSandboxId: string }>('RuntimeService', 'RunPodSandbox', { config })).podSandboxId;
  }

  async stopPodSandbox(id: string): Promise<void> {
    await this.call('RuntimeService', 'StopPodSandbox', { podSandboxId: id });
  }

  async removePodSandbox(id: string): Promise<void> {
    await this.call('RuntimeService', 'RemovePodSandbox', { podSandboxId: id });
  }

  async podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    const r = await this.call<{ status?: PodSandboxStatus }>('RuntimeService', 'PodSandboxStatus', { podSandboxId: id });
    if (!r.status) throw new CriError('PodSandboxStatus', grpc.status.NOT_FOUND, `sandbox ${id} not found`);
    return r.status;
  }

  async listPodSandbox(filter: { labels?: Record<string, string>; state?: PodSandboxState } = {}): Promise<PodSandbox[]> {
    const f: Record<string, unknown> = {};
    if (filter.labels) f.labelSelector = filter.labels;
    if (filter.state) f.state = { state: filter.state };
    return (await this.call<{ items: PodSandbox[] }>('RuntimeService', 'ListPodSandbox', { filter: f })).items;
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    return (await this.call<{ containerId: string }>('RuntimeService', 'CreateContainer', { podSandboxId, config, sandboxConfig })).containerId;
  }

  async startContainer(id: string): Promise<void> {
    await this.call('RuntimeService', 'StartContainer', { containerId: id });
  }

  /** Sends the stop signal, then SIGKILL after timeoutSeconds; resolves once the container has stopped. */
  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    await this.call('RuntimeService', 'StopContainer', { containerId: id, timeout: timeoutSeconds }, this.timeoutMs + timeoutSeconds * 1000);
  }

  async removeContainer(id: string): Promise<void> {
    await this.call('RuntimeService', 'RemoveContainer', { containerId: id });
  }

  async listContainers(filter: { labels?: Record<string, string>; state?: ContainerState; podSandboxId?: string } = {}): Promise<Container[]> {
    const f: Record<string, unknown> = {};
    if (filter.labels) f.labelSelector = filter.labels;
    if (filter.state) f.state = { state: filter.state };
    if (filter.podSandboxId) f.podSandboxId = filter.podSandboxId;
    return (await this.call<{ containers: Container[] }>('RuntimeService', 'ListContainers', { filter: f })).containers;
  }

  /** CPU and memory of the containers (running ones: containerd reads their cgroups), optionally of one sandbox's. */
  async listContainerStats(filter: { labels?: Record<string, string>; podSandboxId?: string } = {}): Promise<ContainerStats[]> {
    const f: Record<string, unknown> = {};
    if (filter.labels) f.labelSelector = filter.labels;
    if (filter.podSandboxId) f.podSandboxId = filter.podSandboxId;
    return (await this.call<{ stats: ContainerStats[] }>('RuntimeService', 'ListContainerStats', { filter: f }, 30_000)).stats;
  }

  async containerStatus(id: string): Promise<ContainerStatus> {
    const r = await this.call<{ status?: ContainerStatus }>('RuntimeService', 'ContainerStatus', { containerId: id });
    if (!r.status) throw new CriError('ContainerStatus', grpc.status.NOT_FOUND, `container ${id} not found`);
    return r.status;
  }

  /** Runs cmd in the container and waits for it, at most timeoutSeconds (0: no limit). */
  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<{ stdout: Buffer; stderr: Buffer; exitCode: number }> {
    const budget = timeoutSeconds > 0 ? timeoutSeconds * 1000 + 10_000 : this.timeoutMs;
    return this.call('RuntimeService', 'ExecSync', { containerId: id, cmd, timeout: timeoutSeconds }, budget);
  }

  /** Tells the runtime the node's pod CIDR (its CNI configuration is made from it). */
  async updatePodCidr(podCidr: string): Promise<void> {
    await this.call('RuntimeService', 'UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr } } });
  }

  /** A URL on the runtime's streaming server that runs cmd in the container once a client connects. */
  async exec(id: string, cmd: string[], streams: { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }): Promise<string> {
    return (await this.call<{ url: string }>('RuntimeService', 'Exec', { containerId: id, cmd, ...streams })).url;
  }

  /** A URL on the runtime's streaming server that joins the container's own standard streams. */
  async attach(id: string, streams: { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }): Promise<string> {
    return (await this.call<{ url: string }>('RuntimeService', 'Attach', { containerId: id, ...streams })).url;
  }

  /** A URL on the runtime's streaming server that forwards connections into the sandbox's network namespace. */
  async portForward(podSandboxId: string, ports: number[]): Promise<string> {
    return (await this.call<{ url: string }>('RuntimeService', 'PortForward', { podSandboxId, port: ports })).url;
  }

  async reopenContainerLog(id: string): Promise<void> {
    await this.call('RuntimeService', 'ReopenContainerLog', { containerId: id });
  }

  // --- images --------------------------------------------------------------------------------

  /** The image when present on the node, else undefined. */
  async imageStatus(image: string): Promise<Image | undefined> {
    const r = await this.call<{ image?: Image | null }>('ImageService', 'ImageStatus', { image: { image } });
    return r.image && r.image.id ? r.image : undefined;
  }

  async pullImage(image: string, auth?: AuthConfig): Promise<string> {
    return (await this.call<{ imageRef: string }>('ImageService', 'PullImage', { image: { image }, ...(auth ? { auth } : {}) }, this.pullTimeoutMs)).imageRef;
  }

  async listImages(): Promise<Image[]> {
    return (await this.call<{ images: Image[] }>('ImageService', 'ListImages', {})).images;
  }

  /** Where the runtime keeps images, and how many bytes they take there. */
  async imageFsInfo(): Promise<{ mountpoint: string; usedBytes: number }[]> {
    const r = await this.call<{ imageFilesystems: { fsId?: { mountpoint: string }; usedBytes?: { value: string } }[] }>('ImageService', 'ImageFsInfo', {});
    return r.imageFilesystems.map((f) => ({ mountpoint: f.fsId?.mountpoint ?? '', usedBytes: Number(f.usedBytes?.value ?? 0) }));
  }

  /** The sandbox (pause) image the runtime is configured with, from its verbose status; undefined when it does not say. */
  async sandboxImage(): Promise<string | undefined> {
    const r = await this.call<{ info: Record<string, string> }>('RuntimeService', 'Status', { verbose: true }, 10_000);
    try {
      return (JSON.parse(r.info.config ?? '{}') as { sandboxImage?: string }).sandboxImage;
    } catch {
      return undefined;
    }
  }

  async removeImage(image: string): Promise<void> {
    await this.call('ImageService', 'RemoveImage', { image: { image } });
  }
}
