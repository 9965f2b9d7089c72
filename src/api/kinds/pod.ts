// core/v1 Pod, plus the PodSpec/PodTemplateSpec rules that the workload kinds reuse.
import { field } from '../errors.js';
import { compareQuantities, quantityErrors, quantitySign, quantityText, scaledValue } from '../quantity.js';
import type { ResourceType } from '../resource.js';
import { isExtendedResourceName, isHugePages, isNativeResource } from '../resource-names.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import {
  childPath,
  inclusiveRangeError,
  indexPath,
  isEnvVarName,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  validateNonnegative,
  keyPath,
  nameIsDNSSubdomain,
  notFound,
  validateAnnotations,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateLabelName,
  validateLabels,
  validateMeta,
  validateQualifiedName,
} from '../validation.js';
import { arr, child, childObjects, deepClone, isObject, type JsonObject, num, obj, objArr, optNum, semanticEqual, str } from './json.js';
import { validateTaintEffect, type TaintEffect } from './node.js';
import { age, column, humanDuration, nameColumn, timestampMs } from './printing.js';

// ---------------------------------------------------------------------------------------------
// Typed views (fields skiff reads or writes; objects may carry more).

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';
export type DNSPolicy = 'ClusterFirstWithHostNet' | 'ClusterFirst' | 'Default' | 'None';
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: Protocol;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}

/** Where every container finds its service-account token, the cluster CA and its namespace. */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The prefix of the volume ServiceAccount admission adds (its name ends in a random suffix). */
export const API_ACCESS_VOLUME_PREFIX = 'kube-api-access-';

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface HTTPGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: 'HTTP' | 'HTTPS';
  httpHeaders?: { name: string; value: string }[];
}

export interface Probe {
  exec?: { command?: string[] };
  httpGet?: HTTPGetAction;
  tcpSocket?: { port: number | string; host?: string };
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  env?: EnvVar[];
  resources?: ResourceRequirements;
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  /** Only on init containers: "Always" makes it a sidecar. */
  restartPolicy?: 'Always';
  terminationMessagePath?: string;
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  imagePullPolicy?: PullPolicy;
  securityContext?: Record<string, unknown>;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  hostPath?: { path: string; type?: string };
  configMap?: { name?: string; defaultMode?: number; items?: unknown[]; optional?: boolean };
  secret?: { secretName?: string; defaultMode?: number; items?: unknown[]; optional?: boolean };
  persistentVolumeClaim?: { claimName?: string; readOnly?: boolean };
  [source: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: TaintEffect | '';
  tolerationSeconds?: number;
}

/** Extra resolv.conf settings, merged into what the pod's dnsPolicy gives it. */
export interface PodDNSConfig {
  nameservers?: string[];
  searches?: string[];
  options?: { name?: string; value?: string }[];
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: DNSPolicy;
  dnsConfig?: PodDNSConfig;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  nodeName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  shareProcessNamespace?: boolean;
  imagePullSecrets?: { name?: string }[];
  securityContext?: Record<string, unknown>;
  hostname?: string;
  subdomain?: string;
  affinity?: Record<string, unknown>;
  schedulerName?: string;
  tolerations?: Toleration[];
  priorityClassName?: string;
  priority?: number;
  readinessGates?: { conditionType: string }[];
  schedulingGates?: { name: string }[];
  enableServiceLinks?: boolean;
}

export interface PodCondition {
  type: 'PodScheduled' | 'Initialized' | 'ContainersReady' | 'Ready' | 'PodReadyToStartContainers' | 'DisruptionTarget' | string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: QOSClass;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec?: PodSpec;
  status?: PodStatus;
}

/** Pods a drain leaves to be stopped in place: DaemonSet pods (their controller would put them back). */
export function isDaemonSetPod(pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.kind === 'DaemonSet' && r.controller === true);
}

/** A pod whose containers are done for good: it holds no resources and needs no moving. */
export function isTerminal(pod: Pod): boolean {
  const p = pod.status?.phase;
  return p === 'Succeeded' || p === 'Failed';
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpec;
}

// ---------------------------------------------------------------------------------------------
// Defaults (core/v1 SetDefaults_PodSpec, _Container, _Probe, _Volume...).

const VOLUME_SOURCES = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile', 'configMap',
  'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos',
  'csi', 'ephemeral', 'image',
];

/** The pod's Ready condition, if it has one. */
export function readyCondition(pod: KubeObject) {
  return ((pod.status ?? {}) as { conditions?: { type: string; status: string; lastTransitionTime?: string }[] }).conditions?.find((c) => c.type === 'Ready');
}

/** The pod's Ready condition is True (what controllers and disruption budgets count as ready). */
export function isPodReady(pod: KubeObject): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** When the pod last became Ready (ms), if it is Ready and says so. */
export function podReadySince(pod: KubeObject): number | undefined {
  const c = readyCondition(pod);
  if (c?.status !== 'True' || !c.lastTransitionTime) return undefined;
  const t = Date.parse(c.lastTransitionTime);
  return Number.isFinite(t) ? t : undefined;
}

/** The tag an image reference resolves to: "latest" when it names neither tag nor digest. */
export function imageTag(image: string): string {
  if (image.includes('@')) {
    const beforeDigest = image.slice(0, image.indexOf('@'));
    const lastPart = beforeDigest.slice(beforeDigest.lastIndexOf('/') + 1);
    return lastPart.includes(':') ? lastPart.slice(lastPart.indexOf(':') + 1) : '';
  }
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  return lastPart.includes(':') ? lastPart.slice(lastPart.indexOf(':') + 1) : 'latest';
}

function defaultHTTPGet(h: unknown): void {
  if (!isObject(h)) return;
  if (!h.path) h.path = '/';
  if (!h.scheme) h.scheme = 'HTTP';
}

function defaultProbe(p: unknown): void {
  if (!isObject(p)) return;
  if (!p.timeoutSeconds) p.timeoutSeconds = 1;
  if (!p.periodSeconds) p.periodSeconds = 10;
  if (!p.successThreshold) p.successThreshold = 1;
  if (!p.failureThreshold) p.failureThreshold = 3;
  defaultHTTPGet(p.httpGet);
}

function defaultFieldRef(ref: unknown): void {
  if (isObject(ref) && !ref.apiVersion) ref.apiVersion = 'v1';
}

export function defaultContainer(c: JsonObject): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(str(c.image)) === 'latest' && str(c.image) !== '' ? 'Always' : 'IfNotPresent';
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const p of childObjects(c, 'ports')) if (!p.protocol) p.protocol = 'TCP';
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(c[probe]);
  const lifecycle = obj(c.lifecycle);
  for (const hook of ['postStart', 'preStop']) defaultHTTPGet(obj(lifecycle[hook]).httpGet);
  for (const e of childObjects(c, 'env')) defaultFieldRef(obj(e.valueFrom).fieldRef);
}

function defaultVolume(v: JsonObject): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined && v[k] !== null)) v.emptyDir = {};
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = v[k];
    if (isObject(src) && src.defaultMode === undefined) src.defaultMode = 0o644;
  }
  if (isObject(v.hostPath) && v.hostPath.type === undefined) v.hostPath.type = '';
  for (const item of childObjects(obj(v.downwardAPI), 'items')) defaultFieldRef(item.fieldRef);
  for (const s of childObjects(obj(v.projected), 'sources')) {
    if (isObject(s.serviceAccountToken) && s.serviceAccountToken.expirationSeconds === undefined) s.serviceAccountToken.expirationSeconds = 3600;
    for (const item of childObjects(obj(s.downwardAPI), 'items')) defaultFieldRef(item.fieldRef);
  }
}

/** Defaults every PodSpec gets, including ones inside workload templates. */
export function defaultPodSpec(spec: JsonObject): void {
  if (!spec.dnsPolicy) spec.dnsPolicy = 'ClusterFirst';
  if (!spec.restartPolicy) spec.restartPolicy = 'Always';
  if (!isObject(spec.securityContext)) spec.securityContext = {};
  if (typeof spec.terminationGracePeriodSeconds !== 'number') spec.terminationGracePeriodSeconds = 30;
  if (!spec.schedulerName) spec.schedulerName = 'default-scheduler';
  // serviceAccount is the deprecated name of serviceAccountName; upstream keeps the two equal.
  if (!spec.serviceAccountName && typeof spec.serviceAccount === 'string' && spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) for (const c of childObjects(spec, list)) defaultContainer(c);
  for (const v of childObjects(spec, 'volumes')) defaultVolume(v);
}

/** Defaults for a workload's spec.template (PodSpec defaults only; pod-only defaults stay off templates). */
export function defaultPodTemplate(template: unknown): void {
  if (!isObject(template)) return;
  defaultPodSpec(child(template, 'spec'));
}

function defaultPod(o: KubeObject): void {
  const spec = child(o, 'spec');
  // Requests default to limits, on pods only (templates keep what the user wrote).
  for (const list of ['containers', 'initContainers']) {
    for (const c of childObjects(spec, list)) {
      const res = obj(c.resources);
      if (!isObject(res.limits)) continue;
      const requests = child(res, 'requests');
      for (const [k, v] of Object.entries(res.limits)) if (requests[k] === undefined) requests[k] = v;
      c.resources = res;
    }
  }
  if (typeof spec.enableServiceLinks !== 'boolean') spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    for (const list of ['containers', 'initContainers']) {
      for (const c of childObjects(spec, list)) {
        for (const p of childObjects(c, 'ports')) if (!p.hostPort) p.hostPort = p.containerPort;
      }
    }
  }
  defaultPodSpec(spec);
}

// ---------------------------------------------------------------------------------------------
// QoS class, as the pod strategy computes it on create.

function addQuantity(sum: Map<string, string[]>, name: string, q: string): void {
  sum.set(name, [...(sum.get(name) ?? []), q]);
}

function total(qs: string[]): bigint {
  return qs.reduce((acc, q) => acc + scaledValue(q, 9), 0n);
}

/** Upstream GetPodQOS over containers and init containers (cpu and memory only). */
export function podQOSClass(spec: unknown): QOSClass {
  const s = obj(spec);
  const requests = new Map<string, string[]>();
  const limits = new Map<string, string[]>();
  let guaranteed = true;
  for (const c of [...objArr(s.containers), ...objArr(s.initContainers)]) {
    const res = obj(c.resources);
    for (const [name, q] of Object.entries(obj(res.requests))) {
      if (name !== 'cpu' && name !== 'memory') continue;
      const text = quantityText(q);
      if (quantityErrors(text).length === 0 && quantitySign(text) > 0) addQuantity(requests, name, text);
    }
    const found = new Set<string>();
    for (const [name, q] of Object.entries(obj(res.limits))) {
      if (name !== 'cpu' && name !== 'memory') continue;
      const text = quantityText(q);
      if (quantityErrors(text).length === 0 && quantitySign(text) > 0) {
        found.add(name);
        addQuantity(limits, name, text);
      }
    }
    if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, qs] of requests) {
      const lim = limits.get(name);
      if (!lim || total(lim) !== total(qs)) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

// ---------------------------------------------------------------------------------------------
// Validation (pkg/apis/core/validation: ValidatePodSpec and friends).

const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

function overcommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePages(name);
}

function validateContainerResourceName(name: string, path: string): StatusCause[] {
  const out = isQualifiedName(name).map((m) => field.invalid(path, name, m));
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) out.push(field.invalid(path, name, 'must be a standard resource for containers'));
  } else if (!isNativeResource(name) && !isExtendedResourceName(name)) {
    out.push(field.invalid(path, name, "doesn't follow extended resource name standard"));
  }
  return out;
}

function validateQuantityValue(q: unknown, path: string): StatusCause[] {
  const text = quantityText(q);
  const errs = quantityErrors(q);
  if (errs.length) return errs.map((m) => field.invalid(path, text, m));
  return quantitySign(text) < 0 ? [field.invalid(path, text, 'must be greater than or equal to 0')] : [];
}

export function validateResourceRequirements(resources: unknown, path: string): StatusCause[] {
  const res = obj(resources);
  const out: StatusCause[] = [];
  const limPath = childPath(path, 'limits');
  const reqPath = childPath(path, 'requests');
  const limits = obj(res.limits);
  for (const [name, q] of Object.entries(limits)) {
    out.push(...validateContainerResourceName(name, keyPath(limPath, name)));
    out.push(...validateQuantityValue(q, keyPath(limPath, name)));
  }
  for (const [name, q] of Object.entries(obj(res.requests))) {
    const p = keyPath(reqPath, name);
    out.push(...validateContainerResourceName(name, p));
    const qErrs = validateQuantityValue(q, p);
    out.push(...qErrs);
    if (qErrs.length) continue;
    const text = quantityText(q);
    if (name in limits) {
      const lim = quantityText(limits[name]);
      if (quantityErrors(lim).length) continue;
      const cmp = compareQuantities(text, lim);
      if (cmp !== 0 && !overcommitAllowed(name)) out.push(field.invalid(reqPath, text, `must be equal to ${name} limit of ${lim}`));
      else if (cmp > 0) out.push(field.invalid(reqPath, text, `must be less than or equal to ${name} limit of ${lim}`));
    } else if (!overcommitAllowed(name)) {
      out.push(field.required(limPath, 'Limit must be set for non overcommitable resources'));
    }
  }
  return out;
}

function validateContainerPorts(ports: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const names = new Set<string>();
  objArr(ports).forEach((p, i) => {
    const ip = indexPath(path, i);
    const name = str(p.name);
    if (name) {
      const errs = isValidPortName(name);
      if (errs.length) out.push(...errs.map((m) => field.invalid(childPath(ip, 'name'), name, m)));
      else if (names.has(name)) out.push(field.duplicate(childPath(ip, 'name'), name));
      else names.add(name);
    }
    const containerPort = num(p.containerPort);
    if (containerPort === 0) out.push(field.required(childPath(ip, 'containerPort')));
    else out.push(...isValidPortNum(containerPort).map((m) => field.invalid(childPath(ip, 'containerPort'), containerPort, m)));
    const hostPort = num(p.hostPort);
    if (hostPort !== 0) out.push(...isValidPortNum(hostPort).map((m) => field.invalid(childPath(ip, 'hostPort'), hostPort, m)));
    const protocol = str(p.protocol);
    if (!protocol) out.push(field.required(childPath(ip, 'protocol')));
    else if (!PORT_PROTOCOLS.includes(protocol)) out.push(field.notSupported(childPath(ip, 'protocol'), protocol, PORT_PROTOCOLS));
  });
  return out;
}

function validateEnv(env: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  objArr(env).forEach((e, i) => {
    const ip = indexPath(path, i);
    const name = str(e.name);
    if (!name) out.push(field.required(childPath(ip, 'name')));
    else out.push(...isEnvVarName(name).map((m) => field.invalid(childPath(ip, 'name'), name, m)));
    if (isObject(e.valueFrom) && str(e.value) !== '') {
      out.push(field.invalid(childPath(ip, 'valueFrom'), '', 'may not be specified when `value` is not empty'));
    }
  });
  return out;
}

function validateVolumeMounts(mounts: unknown, volumes: Set<string>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const mountPoints = new Set<string>();
  objArr(mounts).forEach((m, i) => {
    const ip = indexPath(path, i);
    const name = str(m.name);
    if (!name) out.push(field.required(childPath(ip, 'name')));
    if (!volumes.has(name)) out.push(notFound(childPath(ip, 'name'), name));
    const mountPath = str(m.mountPath);
    if (!mountPath) out.push(field.required(childPath(ip, 'mountPath')));
    if (mountPoints.has(mountPath)) out.push(field.invalid(childPath(ip, 'mountPath'), mountPath, 'must be unique'));
    mountPoints.add(mountPath);
  });
  return out;
}

function validatePullPolicy(policy: string, path: string): StatusCause[] {
  if (policy === 'Always' || policy === 'IfNotPresent' || policy === 'Never') return [];
  if (policy === '') return [field.required(path)];
  return [field.notSupported(path, policy, ['Always', 'IfNotPresent', 'Never'])];
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const PROBE_COUNTS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];

/** Upstream validateProbe: one handler, non-negative whole numbers, liveness and startup need successThreshold 1. */
function validateProbe(probe: unknown, kind: 'livenessProbe' | 'readinessProbe' | 'startupProbe', path: string): StatusCause[] {
  if (probe === undefined || probe === null) return [];
  if (!isObject(probe)) return [field.typeInvalid(path, probe, 'must be an object')];
  const out: StatusCause[] = [];
  const handlers = PROBE_HANDLERS.filter((h) => probe[h] !== undefined && probe[h] !== null);
  if (handlers.length === 0) out.push(field.required(path, 'must specify a handler type'));
  else if (handlers.length > 1) out.push(field.forbidden(childPath(path, handlers[1]!), 'may not specify more than 1 handler type'));
  for (const f of PROBE_COUNTS) {
    const v = probe[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) out.push(field.typeInvalid(childPath(path, f), v, 'must be a whole number'));
    else out.push(...validateNonnegative(v, childPath(path, f)));
  }
  if (kind !== 'readinessProbe' && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1) {
    out.push(field.invalid(childPath(path, 'successThreshold'), probe.successThreshold, 'must be 1'));
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    if (kind === 'readinessProbe') out.push(field.invalid(childPath(path, 'terminationGracePeriodSeconds'), grace, 'must not be set for readinessProbes'));
    else if (typeof grace !== 'number' || !Number.isSafeInteger(grace) || grace <= 0) out.push(field.invalid(childPath(path, 'terminationGracePeriodSeconds'), grace, 'must be greater than 0'));
  }
  for (const h of ['httpGet', 'tcpSocket'] as const) {
    const action = probe[h];
    if (!isObject(action)) continue;
    const port = action.port;
    const pp = childPath(childPath(path, h), 'port');
    if (typeof port === 'number') out.push(...isValidPortNum(port).map((m) => field.invalid(pp, port, m)));
    else if (typeof port !== 'string' || port === '') out.push(field.required(pp));
  }
  return out;
}

function validateContainerCommon(c: JsonObject, volumes: Set<string>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const name = str(c.name);
  if (!name) out.push(field.required(childPath(path, 'name')));
  else out.push(...validateDNS1123Label(name, childPath(path, 'name')));
  if (str(c.image).length === 0) out.push(field.required(childPath(path, 'image')));
  const tmp = str(c.terminationMessagePolicy);
  if (tmp === '') out.push(field.required(childPath(path, 'terminationMessagePolicy')));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    out.push(field.notSupported(childPath(path, 'terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  }
  out.push(...validateContainerPorts(c.ports, childPath(path, 'ports')));
  out.push(...validateEnv(c.env, childPath(path, 'env')));
  out.push(...validateVolumeMounts(c.volumeMounts, volumes, childPath(path, 'volumeMounts')));
  out.push(...validatePullPolicy(str(c.imagePullPolicy), childPath(path, 'imagePullPolicy')));
  out.push(...validateResourceRequirements(c.resources, childPath(path, 'resources')));
  for (const kind of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) out.push(...validateProbe(c[kind], kind, childPath(path, kind)));
  return out;
}

function validateVolumes(volumes: unknown, path: string): { names: Set<string>; errs: StatusCause[] } {
  const names = new Set<string>();
  const errs: StatusCause[] = [];
  objArr(volumes).forEach((v, i) => {
    const ip = indexPath(path, i);
    const sources = VOLUME_SOURCES.filter((k) => v[k] !== undefined && v[k] !== null);
    if (sources.length === 0) errs.push(field.required(ip, 'must specify a volume type'));
    else if (sources.length > 1) errs.push(field.forbidden(childPath(ip, sources[1]!), 'may not specify more than 1 volume type'));
    const name = str(v.name);
    if (!name) errs.push(field.required(childPath(ip, 'name')));
    else errs.push(...validateDNS1123Label(name, childPath(ip, 'name')));
    if (names.has(name)) errs.push(field.duplicate(childPath(ip, 'name'), name));
    else names.add(name);
  });
  return { names, errs };
}

export function validateTolerations(tolerations: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  objArr(tolerations).forEach((t, i) => {
    const ip = indexPath(path, i);
    const key = str(t.key);
    const operator = str(t.operator);
    const value = str(t.value);
    const effect = str(t.effect);
    if (key) out.push(...validateLabelName(key, childPath(ip, 'key')));
    if (!key && operator !== 'Exists') {
      out.push(field.invalid(childPath(ip, 'operator'), operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') {
      out.push(field.invalid(childPath(ip, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === 'Equal' || operator === '') {
      const errs = isValidLabelValue(value);
      if (errs.length) out.push(field.invalid(childPath(ip, 'operator'), value, errs.join(';')));
    } else if (operator === 'Exists') {
      if (value) out.push(field.invalid(childPath(ip, 'operator'), t, "value must be empty when `operator` is 'Exists'"));
    } else {
      out.push(field.notSupported(childPath(ip, 'operator'), operator, ['Equal', 'Exists']));
    }
    if (effect) out.push(...validateTaintEffect(effect, true, childPath(ip, 'effect')));
  });
  return out;
}

function validateRestartPolicy(policy: string, path: string): StatusCause[] {
  if (policy === 'Always' || policy === 'OnFailure' || policy === 'Never') return [];
  if (policy === '') return [field.required(path)];
  return [field.notSupported(path, policy, ['Always', 'OnFailure', 'Never'])];
}

function validateDNSPolicy(policy: string, path: string): StatusCause[] {
  const valid = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
  if (valid.includes(policy)) return [];
  if (policy === '') return [field.required(path)];
  return [field.notSupported(path, policy, valid)];
}

/** Upstream ValidatePodSpec for the fields skiff supports. */
export function validatePodSpec(spec: unknown, path: string): StatusCause[] {
  const s = obj(spec);
  const out: StatusCause[] = [];
  const { names: volumes, errs } = validateVolumes(s.volumes, childPath(path, 'volumes'));
  out.push(...errs);

  const containersPath = childPath(path, 'containers');
  const containers = objArr(s.containers);
  const names = new Set<string>();
  if (containers.length === 0) out.push(field.required(containersPath));
  containers.forEach((c, i) => {
    const ip = indexPath(containersPath, i);
    out.push(...validateContainerCommon(c, volumes, ip));
    const name = str(c.name);
    if (names.has(name)) out.push(field.duplicate(childPath(ip, 'name'), name));
    else names.add(name);
    if (c.restartPolicy !== undefined && c.restartPolicy !== null) {
      out.push(field.forbidden(childPath(ip, 'restartPolicy'), 'may not be set for non-init containers'));
    }
  });
  const initPath = childPath(path, 'initContainers');
  objArr(s.initContainers).forEach((c, i) => {
    const ip = indexPath(initPath, i);
    out.push(...validateContainerCommon(c, volumes, ip));
    const name = str(c.name);
    // Init container names share one namespace with the app containers.
    if (names.has(name)) out.push(field.duplicate(childPath(ip, 'name'), name));
    else names.add(name);
    const rp = c.restartPolicy;
    if (rp !== undefined && rp !== null && rp !== 'Always') out.push(field.notSupported(childPath(ip, 'restartPolicy'), rp, ['Always']));
  });

  out.push(...validateRestartPolicy(str(s.restartPolicy), childPath(path, 'restartPolicy')));
  out.push(...validateDNSPolicy(str(s.dnsPolicy), childPath(path, 'dnsPolicy')));
  out.push(...validateLabels(s.nodeSelector, childPath(path, 'nodeSelector')));

  const sa = str(s.serviceAccountName);
  if (sa) out.push(...validateDNS1123Subdomain(sa, childPath(path, 'serviceAccountName')));
  const nodeName = str(s.nodeName);
  if (nodeName) out.push(...validateDNS1123Subdomain(nodeName, childPath(path, 'nodeName')));
  const ads = optNum(s.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > 2147483647)) {
    out.push(field.invalid(childPath(path, 'activeDeadlineSeconds'), ads, inclusiveRangeError(1, 2147483647)));
  }
  const hostname = str(s.hostname);
  if (hostname) out.push(...validateDNS1123Label(hostname, childPath(path, 'hostname')));
  const subdomain = str(s.subdomain);
  if (subdomain) out.push(...validateDNS1123Label(subdomain, childPath(path, 'subdomain')));
  out.push(...validateTolerations(s.tolerations, childPath(path, 'tolerations')));
  const pcn = str(s.priorityClassName);
  if (pcn) out.push(...validateDNS1123Subdomain(pcn, childPath(path, 'priorityClassName')));

  const gatesPath = childPath(path, 'schedulingGates');
  const gates = new Set<string>();
  objArr(s.schedulingGates).forEach((g, i) => {
    const name = str(g.name);
    out.push(...validateQualifiedName(name, indexPath(gatesPath, i)));
    if (gates.has(name)) out.push(field.duplicate(indexPath(gatesPath, i), name));
    gates.add(name);
  });
  objArr(s.readinessGates).forEach((g, i) => {
    out.push(...validateQualifiedName(str(g.conditionType), childPath(indexPath(childPath(path, 'readinessGates'), i), 'conditionType')));
  });
  return out;
}

/** Upstream ValidatePodTemplateSpec (note: template labels are reported at "<path>.labels"). */
export function validatePodTemplateSpec(template: unknown, path: string): StatusCause[] {
  const t = obj(template);
  const meta = obj(t.metadata);
  const out: StatusCause[] = [];
  out.push(...validateLabels(meta.labels, childPath(path, 'labels')));
  out.push(...validateAnnotations(meta.annotations, childPath(path, 'annotations')));
  out.push(...validatePodSpec(t.spec, childPath(path, 'spec')));
  if (arr(obj(t.spec).ephemeralContainers).length > 0) {
    out.push(field.forbidden(childPath(childPath(path, 'spec'), 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }
  return out;
}

export const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function validateContainerUpdates(newList: unknown, oldList: unknown, path: string): { errs: StatusCause[]; stop: boolean } {
  const n = objArr(newList);
  const o = objArr(oldList);
  if (n.length !== o.length) return { errs: [field.forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: StatusCause[] = [];
  n.forEach((c, i) => {
    const image = str(c.image);
    if (image.length === 0) errs.push(field.required(childPath(indexPath(path, i), 'image')));
    if (image.trim().length !== image.length) errs.push(field.invalid(childPath(indexPath(path, i), 'image'), image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

function validateOnlyAddedTolerations(newT: unknown, oldT: unknown, path: string): StatusCause[] {
  const news = objArr(newT);
  for (const old of objArr(oldT)) {
    // tolerationSeconds may change; everything else of an existing toleration must survive.
    const found = news.some((n) => semanticEqual({ ...old, tolerationSeconds: n.tolerationSeconds }, n));
    if (!found) return [field.forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return validateTolerations(newT, path);
}

function validateOnlyDeletedSchedulingGates(newG: unknown, oldG: unknown, path: string): StatusCause[] {
  const oldNames = new Set(objArr(oldG).map((g) => str(g.name)));
  const out: StatusCause[] = [];
  objArr(newG).forEach((g, i) => {
    const name = str(g.name);
    if (!oldNames.has(name)) out.push(field.forbidden(childPath(indexPath(path, i), 'name'), `only deletion is allowed, but found new scheduling gate '${name}'`));
  });
  return out;
}

/** A compact rendering of what changed, standing in for upstream's cmp.Diff of the two specs. */
function specDiff(oldSpec: JsonObject, newSpec: JsonObject): string {
  const keys = [...new Set([...Object.keys(oldSpec), ...Object.keys(newSpec)])].sort();
  const lines = ['  core.PodSpec{'];
  for (const k of keys) {
    if (semanticEqual(oldSpec[k], newSpec[k])) continue;
    const goName = k.charAt(0).toUpperCase() + k.slice(1);
    if (oldSpec[k] !== undefined) lines.push(`- \t${goName}: ${JSON.stringify(oldSpec[k])},`);
    if (newSpec[k] !== undefined) lines.push(`+ \t${goName}: ${JSON.stringify(newSpec[k])},`);
  }
  lines.push('  }');
  return lines.join('\n');
}

function validatePodUpdate(newPod: KubeObject, oldPod: KubeObject): StatusCause[] {
  const out: StatusCause[] = [];
  const newSpec = obj(newPod.spec);
  const oldSpec = obj(oldPod.spec);
  for (const list of ['containers', 'initContainers']) {
    const { errs, stop } = validateContainerUpdates(newSpec[list], oldSpec[list], `spec.${list}`);
    out.push(...errs);
    if (stop) return out;
  }
  const newADS = optNum(newSpec.activeDeadlineSeconds);
  const oldADS = optNum(oldSpec.activeDeadlineSeconds);
  if (newADS !== undefined) {
    if (newADS < 0 || newADS > 2147483647) {
      out.push(field.invalid('spec.activeDeadlineSeconds', newADS, inclusiveRangeError(0, 2147483647)));
      return out;
    }
    if (oldADS !== undefined && oldADS < newADS) {
      out.push(field.invalid('spec.activeDeadlineSeconds', newADS, 'must be less than or equal to previous value'));
      return out;
    }
  } else if (oldADS !== undefined) {
    out.push(field.invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  }
  out.push(...validateOnlyAddedTolerations(newSpec.tolerations, oldSpec.tolerations, 'spec.tolerations'));
  out.push(...validateOnlyDeletedSchedulingGates(newSpec.schedulingGates, oldSpec.schedulingGates, 'spec.schedulingGates'));
  if (semanticEqual(newSpec, oldSpec)) return out;

  // Overwrite the mutable fields with their old values; whatever still differs is forbidden.
  const munged = deepClone(newSpec);
  for (const list of ['containers', 'initContainers']) {
    const oldList = objArr(oldSpec[list]);
    if (Array.isArray(munged[list])) {
      munged[list] = (munged[list] as unknown[]).map((c, i) => (isObject(c) ? { ...c, image: oldList[i]?.image } : c));
    }
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.schedulingGates = oldSpec.schedulingGates;
  munged.tolerations = oldSpec.tolerations;
  const oldGrace = optNum(oldSpec.terminationGracePeriodSeconds);
  if (oldGrace !== undefined && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace;
  if (arr(oldSpec.schedulingGates).length > 0) {
    // A gated pod may still gain node selector entries (but not lose or change them).
    const oldSel = obj(oldSpec.nodeSelector);
    const newSel = obj(munged.nodeSelector);
    if (Object.entries(oldSel).every(([k, v]) => newSel[k] === v)) munged.nodeSelector = oldSpec.nodeSelector;
  }
  if (!semanticEqual(munged, oldSpec)) out.push(field.forbidden('spec', `${POD_UPDATE_FORBIDDEN}\n${specDiff(oldSpec, munged)}`));
  return out;
}

/**
 * A status write is judged on its metadata only, as upstream's ValidatePodStatusUpdate does not
 * re-judge the spec: the spec is the stored one (a status write cannot change it), so a pod stored
 * before a spec rule existed still gets its status written. Upstream also checks the status's own
 * fields; skiff does not yet.
 */
function validatePodStatusUpdate(o: KubeObject, old: KubeObject): StatusCause[] {
  return validateMeta(o, old, true, nameIsDNSSubdomain);
}

function validatePod(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  out.push(...validatePodSpec(o.spec, 'spec'));
  if (old) out.push(...validatePodUpdate(o, old));
  else if (arr(obj(o.spec).ephemeralContainers).length > 0) out.push(field.forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  return out;
}

function prepareForCreate(o: KubeObject): void {
  const spec = obj(o.spec);
  const status: JsonObject = { phase: 'Pending', qosClass: podQOSClass(spec) };
  if (arr(spec.schedulingGates).length > 0) {
    status.conditions = [
      {
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: null,
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
      },
    ];
  }
  o.status = status;
}

// ---------------------------------------------------------------------------------------------
// Table (printPod).

function isRestartableInit(spec: JsonObject, name: string): boolean {
  return objArr(spec.initContainers).some((c) => str(c.name) === name && c.restartPolicy === 'Always');
}

function hasCondition(status: JsonObject, type: string): boolean {
  return objArr(status.conditions).some((c) => str(c.type) === type && str(c.status) === 'True');
}

/** The READY, STATUS and RESTARTS cells of a pod, exactly as kubectl shows them. */
export function podSummary(o: KubeObject, now: number): { ready: string; status: string; restarts: string } {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const phase = str(status.phase);
  let reason = str(status.reason) || phase;
  for (const c of objArr(status.conditions)) {
    if (str(c.type) === 'PodScheduled' && str(c.reason) === 'SchedulingGated') reason = 'SchedulingGated';
  }
  let total = arr(spec.containers).length;
  for (const c of objArr(spec.initContainers)) if (c.restartPolicy === 'Always') total++;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;

  const initStatuses = objArr(status.initContainerStatuses);
  let initializing = false;
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i]!;
    const count = num(cs.restartCount);
    restarts += count;
    const finished = timestampMs(obj(obj(cs.lastState).terminated).finishedAt);
    if (finished !== undefined && finished > lastRestart) lastRestart = finished;
    const sidecar = isRestartableInit(spec, str(cs.name));
    if (sidecar) {
      sidecarRestarts += count;
      if (finished !== undefined && finished > lastSidecarRestart) lastSidecarRestart = finished;
    }
    const state = obj(cs.state);
    const terminated = isObject(state.terminated) ? state.terminated : undefined;
    const waiting = isObject(state.waiting) ? state.waiting : undefined;
    if (terminated && num(terminated.exitCode) === 0) continue;
    if (sidecar && cs.started === true) {
      if (cs.ready === true) ready++;
      continue;
    }
    if (terminated) {
      const r = str(terminated.reason);
      if (r) reason = `Init:${r}`;
      else if (num(terminated.signal) !== 0) reason = `Init:Signal:${num(terminated.signal)}`;
      else reason = `Init:ExitCode:${num(terminated.exitCode)}`;
    } else if (waiting && str(waiting.reason) && str(waiting.reason) !== 'PodInitializing') {
      reason = `Init:${str(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${arr(spec.initContainers).length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || hasCondition(status, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = objArr(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]!;
      restarts += num(cs.restartCount);
      const finished = timestampMs(obj(obj(cs.lastState).terminated).finishedAt);
      if (finished !== undefined && finished > lastRestart) lastRestart = finished;
      const state = obj(cs.state);
      const waiting = isObject(state.waiting) ? state.waiting : undefined;
      const terminated = isObject(state.terminated) ? state.terminated : undefined;
      if (waiting && str(waiting.reason)) reason = str(waiting.reason);
      else if (terminated && str(terminated.reason)) reason = str(terminated.reason);
      else if (terminated) reason = num(terminated.signal) !== 0 ? `Signal:${num(terminated.signal)}` : `ExitCode:${num(terminated.exitCode)}`;
      else if (cs.ready === true && isObject(state.running)) {
        hasRunning = true;
        ready++;
      }
    }
    // A pod whose last-listed container completed while others still run is not "Completed".
    if (reason === 'Completed' && hasRunning) reason = hasCondition(status, 'Ready') ? 'Running' : 'NotReady';
  }

  if (o.metadata?.deletionTimestamp && str(status.reason) === 'NodeLost') reason = 'Unknown';
  else if (o.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsText = restarts !== 0 && lastRestart !== 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  return { ready: `${ready}/${total}`, status: reason, restarts: restartsText };
}

/** The pod's primary IP: status.podIPs[0], falling back to the legacy status.podIP. */
export function podIP(o: KubeObject): string {
  const status = obj(o.status);
  const first = objArr(status.podIPs)[0];
  return first ? str(first.ip) : str(status.podIP);
}

/**
 * A bound, unfinished pod waits for its node to stop it (the request's grace period, else the
 * pod's terminationGracePeriodSeconds, else 30 s); an unscheduled or finished one has no kubelet
 * to wait for and goes at once.
 */
function podDeletionGracePeriod(o: KubeObject, requested: number | undefined): number {
  const spec = obj(o.spec);
  const phase = str(obj(o.status).phase);
  if (!str(spec.nodeName) || phase === 'Succeeded' || phase === 'Failed') return 0;
  // Upstream turns a requested 0 into 1 for bound pods unless forced; the agent then stops it quickly.
  return Math.max(0, requested ?? optNum(spec.terminationGracePeriodSeconds) ?? 30);
}

export const podResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
  listKind: 'PodList',
  singular: 'pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status', 'binding', 'eviction', 'log', 'exec', 'attach', 'portforward'],
  deletionGracePeriod: podDeletionGracePeriod,
  returnsDeletedObject: true,
  fieldSelectors: {
    'spec.nodeName': (o) => str(obj(o.spec).nodeName),
    'spec.restartPolicy': (o) => str(obj(o.spec).restartPolicy),
    'spec.schedulerName': (o) => str(obj(o.spec).schedulerName),
    'spec.serviceAccountName': (o) => str(obj(o.spec).serviceAccountName),
    'spec.hostNetwork': (o) => String(obj(o.spec).hostNetwork === true),
    'status.phase': (o) => str(obj(o.status).phase),
    'status.podIP': (o) => podIP(o),
    'status.nominatedNodeName': (o) => str(obj(o.status).nominatedNodeName),
  },
  table: {
    columns: [
      nameColumn,
      column('Ready', 'string', 'Ready containers out of all containers of the pod.'),
      column('Status', 'string', 'Summary of the pod phase and its containers states.'),
      column('Restarts', 'string', 'Container restarts, and how long ago the last one was.'),
      column('Age', 'string', 'Time since the object was created.'),
      column('IP', 'string', 'Primary IP address of the pod.', 1),
      column('Node', 'string', 'Node the pod is bound to.', 1),
      column('Nominated Node', 'string', 'Node the scheduler nominated through preemption.', 1),
      column('Readiness Gates', 'string', 'Readiness gates that are true out of all readiness gates.', 1),
    ],
    cells(o, now) {
      const s = podSummary(o, now);
      const spec = obj(o.spec);
      const status = obj(o.status);
      const gates = objArr(spec.readinessGates);
      let readinessGates = '<none>';
      if (gates.length > 0) {
        let trueCount = 0;
        for (const g of gates) {
          const cond = objArr(status.conditions).find((c) => str(c.type) === str(g.conditionType));
          if (cond && str(cond.status) === 'True') trueCount++;
        }
        readinessGates = `${trueCount}/${gates.length}`;
      }
      return [
        o.metadata?.name ?? '',
        s.ready,
        s.status,
        s.restarts,
        age(o, now),
        podIP(o) || '<none>',
        str(spec.nodeName) || '<none>',
        str(status.nominatedNodeName) || '<none>',
        readinessGates,
      ];
    },
  },
  hasGeneration: false,
  defaults: defaultPod,
  validate: validatePod,
  validateStatusUpdate: validatePodStatusUpdate,
  prepareForCreate,
};
