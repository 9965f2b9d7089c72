// How a pod and its containers are described to a CRI runtime, as the kubelet describes them:
// the sandbox (namespaces, hostname, port mappings, cgroup parent, the labels that say whose it
// is) and each container (image, command and args as written — the runtime combines them with the
// image's entrypoint and cmd the way upstream does — env, mounts, resources, security context).
// Pure functions: the runtime lifecycle lives in ./containerd.ts.
import { join } from 'node:path';
import type { Container, Pod } from '../../api/kinds/pod.js';
import { milliValue, integerValue } from '../../api/quantity.js';
import type { ContainerConfig, LinuxContainerResources, LinuxContainerSecurityContext, Mount, PodSandboxConfig, PortMapping } from '../../cri/messages.js';

/** The labels the kubelet puts on sandboxes and containers (crictl and other tools read them). */
export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';
/** Which node's agent owns a sandbox or container: agents sharing one runtime leave each other's alone. */
export const NODE_LABEL = 'skiff.io/node';

const CPU_PERIOD_US = 100_000;
const MIN_CPU_SHARES = 2;
const MIN_CPU_QUOTA_US = 1_000;

export interface SandboxInput {
  pod: Pod;
  nodeName: string;
  /** Where the sandbox's container logs go (CRI log_directory). */
  logDirectory: string;
  /** Cgroup parent of the pod's cgroup (cgroupfs path). */
  cgroupRoot: string;
  attempt: number;
}

export function podLabels(pod: Pod, nodeName: string): Record<string, string> {
  return {
    [POD_NAME_LABEL]: pod.metadata.name ?? '',
    [POD_NAMESPACE_LABEL]: pod.metadata.namespace ?? 'default',
    [POD_UID_LABEL]: pod.metadata.uid ?? '',
    [NODE_LABEL]: nodeName,
  };
}

function portMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c?.ports ?? []) {
      if (!p || !p.hostPort) continue;
      const protocol = p.protocol === 'UDP' || p.protocol === 'SCTP' ? p.protocol : 'TCP';
      out.push({ protocol, containerPort: p.containerPort, hostPort: p.hostPort, ...(p.hostIP ? { hostIp: p.hostIP } : {}) });
    }
  }
  return out;
}

function int64(v: unknown): { value: number } | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? { value: v } : undefined;
}

export function sandboxConfig(i: SandboxInput): PodSandboxConfig {
  const spec = i.pod.spec ?? { containers: [] };
  const psc = (spec.securityContext ?? {}) as Record<string, unknown>;
  const hostname = (typeof spec.hostname === 'string' && spec.hostname) || (i.pod.metadata.name ?? 'pod');
  const runAsUser = int64(psc.runAsUser);
  const runAsGroup = int64(psc.runAsGroup);
  const groups = Array.isArray(psc.supplementalGroups) ? psc.supplementalGroups.filter((g): g is number => typeof g === 'number') : [];
  const sysctls: Record<string, string> = {};
  for (const s of Array.isArray(psc.sysctls) ? (psc.sysctls as { name?: unknown; value?: unknown }[]) : []) {
    if (typeof s?.name === 'string' && typeof s.value === 'string') sysctls[s.name] = s.value;
  }
  return {
    metadata: { name: i.pod.metadata.name ?? '', uid: i.pod.metadata.uid ?? '', namespace: i.pod.metadata.namespace ?? 'default', attempt: i.attempt },
    hostname: spec.hostNetwork ? '' : hostname.slice(0, 63),
    logDirectory: i.logDirectory,
    portMappings: portMappings(i.pod),
    labels: podLabels(i.pod, i.nodeName),
    annotations: { ...(i.pod.metadata.annotations ?? {}) },
    linux: {
      cgroupParent: join(i.cgroupRoot, `pod${i.pod.metadata.uid ?? ''}`),
      securityContext: {
        namespaceOptions: {
          network: spec.hostNetwork ? 'NODE' : 'POD',
          pid: spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
          ipc: spec.hostIPC ? 'NODE' : 'POD',
        },
        ...(runAsUser ? { runAsUser } : {}),
        ...(runAsGroup ? { runAsGroup } : {}),
        ...(groups.length > 0 ? { supplementalGroups: groups } : {}),
      },
      sysctls,
    },
  };
}

/** cgroup settings from requests and limits, as the kubelet computes them (cgroup v1 units). */
export function linuxResources(c: Container): LinuxContainerResources {
  const limits = c.resources?.limits ?? {};
  const requests = c.resources?.requests ?? {};
  const r: LinuxContainerResources = {};
  const cpuRequest = requests.cpu ?? limits.cpu;
  r.cpuShares = cpuRequest !== undefined ? Math.max(MIN_CPU_SHARES, Math.floor((milliValue(cpuRequest) * 1024) / 1000)) : MIN_CPU_SHARES;
  if (limits.cpu !== undefined) {
    r.cpuPeriod = CPU_PERIOD_US;
    r.cpuQuota = Math.max(MIN_CPU_QUOTA_US, Math.floor((milliValue(limits.cpu) * CPU_PERIOD_US) / 1000));
  }
  if (limits.memory !== undefined) r.memoryLimitInBytes = integerValue(limits.memory);
  return r;
}

const CAPABILITY = /^[A-Z_]+$/;

export function containerSecurity(pod: Pod, c: Container): LinuxContainerSecurityContext {
  const psc = (pod.spec?.securityContext ?? {}) as Record<string, unknown>;
  const sc = (c.securityContext ?? {}) as Record<string, unknown>;
  const out: LinuxContainerSecurityContext = {
    namespaceOptions: {
      network: pod.spec?.hostNetwork ? 'NODE' : 'POD',
      pid: pod.spec?.hostPID ? 'NODE' : pod.spec?.shareProcessNamespace ? 'POD' : 'CONTAINER',
      ipc: pod.spec?.hostIPC ? 'NODE' : 'POD',
    },
  };
  const runAsUser = int64(sc.runAsUser) ?? int64(psc.runAsUser);
  const runAsGroup = int64(sc.runAsGroup) ?? int64(psc.runAsGroup);
  if (runAsUser) out.runAsUser = runAsUser;
  if (runAsGroup) out.runAsGroup = runAsGroup;
  if (Array.isArray(psc.supplementalGroups)) out.supplementalGroups = psc.supplementalGroups.filter((g): g is number => typeof g === 'number');
  if (sc.privileged === true) out.privileged = true;
  if (sc.readOnlyRootFilesystem === true) out.readonlyRootfs = true;
  // allowPrivilegeEscalation defaults to true unless the container runs unprivileged with it off.
  if (sc.allowPrivilegeEscalation === false) out.noNewPrivs = true;
  const caps = (sc.capabilities ?? {}) as { add?: unknown; drop?: unknown };
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && CAPABILITY.test(x)) : []);
  const add = list(caps.add);
  const drop = list(caps.drop);
  if (add.length > 0 || drop.length > 0) out.capabilities = { addCapabilities: add, dropCapabilities: drop };
  return out;
}

export interface ContainerInput {
  pod: Pod;
  container: Container;
  nodeName: string;
  attempt: number;
  /** command and args with $(VAR) already expanded. */
  command: string[];
  args: string[];
  env: Record<string, string>;
  /** Relative to the sandbox's log directory. */
  logPath: string;
  mounts: Mount[];
}

export function containerConfig(i: ContainerInput): ContainerConfig {
  const c = i.container;
  return {
    metadata: { name: c.name, attempt: i.attempt },
    image: { image: c.image ?? '' },
    command: i.command,
    args: i.args,
    ...(typeof c.workingDir === 'string' && c.workingDir ? { workingDir: c.workingDir } : {}),
    envs: Object.entries(i.env).map(([key, value]) => ({ key, value })),
    mounts: i.mounts,
    labels: { ...podLabels(i.pod, i.nodeName), [CONTAINER_NAME_LABEL]: c.name },
    annotations: { 'io.kubernetes.container.restartCount': String(i.attempt) },
    logPath: i.logPath,
    stdin: c.stdin === true,
    stdinOnce: c.stdinOnce === true,
    tty: c.tty === true,
    linux: { resources: linuxResources(c), securityContext: containerSecurity(i.pod, c) },
  };
}

/** imagePullPolicy as the API defaults it: Always for :latest or an untagged image, else IfNotPresent. */
export function pullPolicy(c: Container): 'Always' | 'IfNotPresent' | 'Never' {
  if (c.imagePullPolicy === 'Always' || c.imagePullPolicy === 'IfNotPresent' || c.imagePullPolicy === 'Never') return c.imagePullPolicy;
  const image = c.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}
