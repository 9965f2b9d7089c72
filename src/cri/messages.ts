// The part of the Container Runtime Interface (runtime.v1, k8s.io/cri-api api.proto) the agent
// speaks, written for skiff from upstream's definitions. Field numbers and types are the wire
// contract with containerd and must match upstream exactly; messages and fields skiff does not use
// are left out (protobuf skips unknown fields, so a newer runtime's answers still decode).
// Field names follow protobufjs' camelCase of upstream's snake_case names.

export const CRI_PACKAGE = 'runtime.v1';

export const CRI_PROTO = `
syntax = "proto3";
package runtime.v1;

message VersionRequest { string version = 1; }
message VersionResponse { string version = 1; string runtime_name = 2; string runtime_version = 3; string runtime_api_version = 4; }

message DNSConfig { repeated string servers = 1; repeated string searches = 2; repeated string options = 3; }
enum Protocol { TCP = 0; UDP = 1; SCTP = 2; }
message PortMapping { Protocol protocol = 1; int32 container_port = 2; int32 host_port = 3; string host_ip = 4; }
enum MountPropagation { PROPAGATION_PRIVATE = 0; PROPAGATION_HOST_TO_CONTAINER = 1; PROPAGATION_BIDIRECTIONAL = 2; }
message Mount { string container_path = 1; string host_path = 2; bool readonly = 3; bool selinux_relabel = 4; MountPropagation propagation = 5; }
enum NamespaceMode { POD = 0; CONTAINER = 1; NODE = 2; TARGET = 3; }
message NamespaceOption { NamespaceMode network = 1; NamespaceMode pid = 2; NamespaceMode ipc = 3; string target_id = 4; }
message Int64Value { int64 value = 1; }
message LinuxSandboxSecurityContext {
  NamespaceOption namespace_options = 1;
  Int64Value run_as_user = 3;
  bool readonly_rootfs = 4;
  repeated int64 supplemental_groups = 5;
  bool privileged = 6;
  Int64Value run_as_group = 8;
}
message LinuxPodSandboxConfig { string cgroup_parent = 1; LinuxSandboxSecurityContext security_context = 2; map<string, string> sysctls = 3; }
message PodSandboxMetadata { string name = 1; string uid = 2; string namespace = 3; uint32 attempt = 4; }
message PodSandboxConfig {
  PodSandboxMetadata metadata = 1;
  string hostname = 2;
  string log_directory = 3;
  DNSConfig dns_config = 4;
  repeated PortMapping port_mappings = 5;
  map<string, string> labels = 6;
  map<string, string> annotations = 7;
  LinuxPodSandboxConfig linux = 8;
}
message RunPodSandboxRequest { PodSandboxConfig config = 1; string runtime_handler = 2; }
message RunPodSandboxResponse { string pod_sandbox_id = 1; }
message StopPodSandboxRequest { string pod_sandbox_id = 1; }
message StopPodSandboxResponse {}
message RemovePodSandboxRequest { string pod_sandbox_id = 1; }
message RemovePodSandboxResponse {}
message PodSandboxStatusRequest { string pod_sandbox_id = 1; bool verbose = 2; }
message PodIP { string ip = 1; }
message PodSandboxNetworkStatus { string ip = 1; repeated PodIP additional_ips = 2; }
enum PodSandboxState { SANDBOX_READY = 0; SANDBOX_NOTREADY = 1; }
message PodSandboxStatus {
  string id = 1;
  PodSandboxMetadata metadata = 2;
  PodSandboxState state = 3;
  int64 created_at = 4;
  PodSandboxNetworkStatus network = 5;
  map<string, string> labels = 7;
  map<string, string> annotations = 8;
}
message PodSandboxStatusResponse { PodSandboxStatus status = 1; map<string, string> info = 2; }
message PodSandboxStateValue { PodSandboxState state = 1; }
message PodSandboxFilter { string id = 1; PodSandboxStateValue state = 2; map<string, string> label_selector = 3; }
message ListPodSandboxRequest { PodSandboxFilter filter = 1; }
message PodSandbox {
  string id = 1;
  PodSandboxMetadata metadata = 2;
  PodSandboxState state = 3;
  int64 created_at = 4;
  map<string, string> labels = 5;
  map<string, string> annotations = 6;
}
message ListPodSandboxResponse { repeated PodSandbox items = 1; }

message ImageSpec { string image = 1; map<string, string> annotations = 2; }
// Upstream now declares value as bytes; a string has the same wire form and is what containerd 1.x reads.
message KeyValue { string key = 1; string value = 2; }
message LinuxContainerResources {
  int64 cpu_period = 1;
  int64 cpu_quota = 2;
  int64 cpu_shares = 3;
  int64 memory_limit_in_bytes = 4;
  int64 oom_score_adj = 5;
}
message Capability { repeated string add_capabilities = 1; repeated string drop_capabilities = 2; }
message LinuxContainerSecurityContext {
  Capability capabilities = 1;
  bool privileged = 2;
  NamespaceOption namespace_options = 3;
  Int64Value run_as_user = 5;
  string run_as_username = 6;
  bool readonly_rootfs = 7;
  repeated int64 supplemental_groups = 8;
  bool no_new_privs = 11;
  Int64Value run_as_group = 12;
}
message LinuxContainerConfig { LinuxContainerResources resources = 1; LinuxContainerSecurityContext security_context = 2; }
message ContainerMetadata { string name = 1; uint32 attempt = 2; }
message ContainerConfig {
  ContainerMetadata metadata = 1;
  ImageSpec image = 2;
  repeated string command = 3;
  repeated string args = 4;
  string working_dir = 5;
  repeated KeyValue envs = 6;
  repeated Mount mounts = 7;
  map<string, string> labels = 9;
  map<string, string> annotations = 10;
  string log_path = 11;
  bool stdin = 12;
  bool stdin_once = 13;
  bool tty = 14;
  LinuxContainerConfig linux = 15;
}
message CreateContainerRequest { string pod_sandbox_id = 1; ContainerConfig config = 2; PodSandboxConfig sandbox_config = 3; }
message CreateContainerResponse { string container_id = 1; }
message StartContainerRequest { string container_id = 1; }
message StartContainerResponse {}
message StopContainerRequest { string container_id = 1; int64 timeout = 2; }
message StopContainerResponse {}
message RemoveContainerRequest { string container_id = 1; }
message RemoveContainerResponse {}
enum ContainerState { CONTAINER_CREATED = 0; CONTAINER_RUNNING = 1; CONTAINER_EXITED = 2; CONTAINER_UNKNOWN = 3; }
message ContainerStateValue { ContainerState state = 1; }
message ContainerFilter { string id = 1; ContainerStateValue state = 2; string pod_sandbox_id = 3; map<string, string> label_selector = 4; }
message ListContainersRequest { ContainerFilter filter = 1; }
message Container {
  string id = 1;
  string pod_sandbox_id = 2;
  ContainerMetadata metadata = 3;
  ImageSpec image = 4;
  string image_ref = 5;
  ContainerState state = 6;
  int64 created_at = 7;
  map<string, string> labels = 8;
  map<string, string> annotations = 9;
}
message ListContainersResponse { repeated Container containers = 1; }
message ContainerStatusRequest { string container_id = 1; bool verbose = 2; }
message ContainerStatus {
  string id = 1;
  ContainerMetadata metadata = 2;
  ContainerState state = 3;
  int64 created_at = 4;
  int64 started_at = 5;
  int64 finished_at = 6;
  int32 exit_code = 7;
  ImageSpec image = 8;
  string image_ref = 9;
  string reason = 10;
  string message = 11;
  map<string, string> labels = 12;
  map<string, string> annotations = 13;
  string log_path = 15;
}
message ContainerStatusResponse { ContainerStatus status = 1; map<string, string> info = 2; }
message ExecSyncRequest { string container_id = 1; repeated string cmd = 2; int64 timeout = 3; }
message ExecSyncResponse { bytes stdout = 1; bytes stderr = 2; int32 exit_code = 3; }
// The streaming calls answer a one-time URL on the runtime's streaming server, where the client
// (through the agent) upgrades to SPDY or WebSocket as kubectl does with the kubelet.
message ExecRequest { string container_id = 1; repeated string cmd = 2; bool tty = 3; bool stdin = 4; bool stdout = 5; bool stderr = 6; }
message ExecResponse { string url = 1; }
message AttachRequest { string container_id = 1; bool stdin = 2; bool tty = 3; bool stdout = 4; bool stderr = 5; }
message AttachResponse { string url = 1; }
message PortForwardRequest { string pod_sandbox_id = 1; repeated int32 port = 2; }
message PortForwardResponse { string url = 1; }
message ReopenContainerLogRequest { string container_id = 1; }
message ReopenContainerLogResponse {}

message ImageFilter { ImageSpec image = 1; }
message ListImagesRequest { ImageFilter filter = 1; }
message Image { string id = 1; repeated string repo_tags = 2; repeated string repo_digests = 3; uint64 size = 4; Int64Value uid = 5; string username = 6; }
message ListImagesResponse { repeated Image images = 1; }
message ImageStatusRequest { ImageSpec image = 1; bool verbose = 2; }
message ImageStatusResponse { Image image = 1; map<string, string> info = 2; }
message AuthConfig { string username = 1; string password = 2; string auth = 3; string server_address = 4; string identity_token = 5; string registry_token = 6; }
message PullImageRequest { ImageSpec image = 1; AuthConfig auth = 2; PodSandboxConfig sandbox_config = 3; }
message PullImageResponse { string image_ref = 1; }
message RemoveImageRequest { ImageSpec image = 1; }
message RemoveImageResponse {}

message NetworkConfig { string pod_cidr = 1; }
message RuntimeConfig { NetworkConfig network_config = 1; }
message UpdateRuntimeConfigRequest { RuntimeConfig runtime_config = 1; }
message UpdateRuntimeConfigResponse {}
message ImageFsInfoRequest {}
message UInt64Value { uint64 value = 1; }
message FilesystemIdentifier { string mountpoint = 1; }
message FilesystemUsage { int64 timestamp = 1; FilesystemIdentifier fs_id = 2; UInt64Value used_bytes = 3; UInt64Value inodes_used = 4; }
message ImageFsInfoResponse { repeated FilesystemUsage image_filesystems = 1; repeated FilesystemUsage container_filesystems = 2; }
message ContainerStatsFilter { string id = 1; string pod_sandbox_id = 2; map<string, string> label_selector = 3; }
message ListContainerStatsRequest { ContainerStatsFilter filter = 1; }
message ContainerAttributes { string id = 1; ContainerMetadata metadata = 2; map<string, string> labels = 3; map<string, string> annotations = 4; }
message CpuUsage { int64 timestamp = 1; UInt64Value usage_core_nano_seconds = 2; UInt64Value usage_nano_cores = 3; }
message MemoryUsage {
  int64 timestamp = 1;
  UInt64Value working_set_bytes = 2;
  UInt64Value available_bytes = 3;
  UInt64Value usage_bytes = 4;
  UInt64Value rss_bytes = 5;
  UInt64Value page_faults = 6;
  UInt64Value major_page_faults = 7;
}
message ContainerStats { ContainerAttributes attributes = 1; CpuUsage cpu = 2; MemoryUsage memory = 3; FilesystemUsage writable_layer = 4; }
message ListContainerStatsResponse { repeated ContainerStats stats = 1; }
message RuntimeCondition { string type = 1; bool status = 2; string reason = 3; string message = 4; }
message RuntimeStatus { repeated RuntimeCondition conditions = 1; }
message StatusRequest { bool verbose = 1; }
message StatusResponse { RuntimeStatus status = 1; map<string, string> info = 2; }
`;

// --- the TypeScript shapes of the messages above (as protobufjs decodes them: int64 as string) ---

export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
}

export interface PortMapping {
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  containerPort: number;
  hostPort: number;
  hostIp?: string;
}

export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
}

export interface PodSandboxConfig {
  metadata: { name: string; uid: string; namespace: string; attempt: number };
  hostname?: string;
  logDirectory?: string;
  dnsConfig?: { servers?: string[]; searches?: string[]; options?: string[] };
  portMappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  linux?: {
    cgroupParent?: string;
    securityContext?: { namespaceOptions?: NamespaceOption; runAsUser?: { value: number }; runAsGroup?: { value: number }; supplementalGroups?: number[]; privileged?: boolean };
    sysctls?: Record<string, string>;
  };
}

export interface LinuxContainerResources {
  cpuPeriod?: number;
  cpuQuota?: number;
  cpuShares?: number;
  memoryLimitInBytes?: number;
  oomScoreAdj?: number;
}

export interface LinuxContainerSecurityContext {
  capabilities?: { addCapabilities?: string[]; dropCapabilities?: string[] };
  privileged?: boolean;
  namespaceOptions?: NamespaceOption;
  runAsUser?: { value: number };
  runAsGroup?: { value: number };
  runAsUsername?: string;
  readonlyRootfs?: boolean;
  supplementalGroups?: number[];
  noNewPrivs?: boolean;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: { image: string };
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: { key: string; value: string }[];
  mounts?: Mount[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  logPath?: string;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
  linux?: { resources?: LinuxContainerResources; securityContext?: LinuxContainerSecurityContext };
}

export interface PodSandbox {
  id: string;
  metadata?: { name: string; uid: string; namespace: string; attempt: number };
  state: PodSandboxState;
  createdAt: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface PodSandboxStatus extends PodSandbox {
  network?: { ip: string; additionalIps: { ip: string }[] };
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata?: { name: string; attempt: number };
  image?: { image: string };
  imageRef: string;
  state: ContainerState;
  createdAt: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerStatus {
  id: string;
  metadata?: { name: string; attempt: number };
  state: ContainerState;
  /** Nanoseconds since the epoch, as decimal strings (int64); "0" when not yet. */
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  image?: { image: string };
  imageRef: string;
  reason: string;
  message: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  logPath: string;
}

export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: string;
  uid?: { value: string };
  username: string;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

/** A container's CPU and memory as the runtime read them (uint64 and int64 as decimal strings). */
export interface ContainerStats {
  attributes?: { id: string; metadata?: { name: string; attempt: number }; labels: Record<string, string> };
  cpu?: { timestamp: string; usageCoreNanoSeconds?: { value: string }; usageNanoCores?: { value: string } };
  memory?: { timestamp: string; workingSetBytes?: { value: string }; availableBytes?: { value: string }; usageBytes?: { value: string }; rssBytes?: { value: string } };
}
