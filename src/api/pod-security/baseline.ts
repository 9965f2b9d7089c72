// The baseline level's checks: what stops known privilege escalations, with upstream's reasons
// and details word for word (pod-security-admission policy/check_*.go, policy version 1.32).
import { arr, isObject, type JsonObject } from '../kinds/json.js';
import {
  containersOf,
  containersPhrase,
  field,
  joinQuote,
  nameOf,
  pluralize,
  securityContextOf,
  setters,
  sortedSet,
  type Check,
  type CheckPod,
  type Violation,
} from './check.js';

export const CAPABILITIES_BASELINE = 'capabilities_baseline';
export const HOST_PATH_VOLUMES = 'hostPathVolumes';
export const SECCOMP_BASELINE = 'seccompProfile_baseline';

const hostNamespaces: CheckPod = ({ spec }) => {
  const used = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true).map((k) => `${k}=true`);
  return used.length > 0 ? { reason: 'host namespaces', detail: used.join(', ') } : undefined;
};

const privileged: CheckPod = ({ spec }) => {
  const bad = containersOf(spec).filter((c) => securityContextOf(c)?.privileged === true).map(nameOf);
  return bad.length > 0 ? { reason: 'privileged', detail: `${containersPhrase(bad)} must not set securityContext.privileged=true` } : undefined;
};

/** The capabilities a container runtime grants by default: adding one of these changes nothing. */
const DEFAULT_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

const capabilitiesBaseline: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const added: string[] = [];
  for (const c of containersOf(spec)) {
    const caps = arr(field(securityContextOf(c), 'capabilities')?.add).map(String);
    const extra = caps.filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (extra.length === 0) continue;
    bad.push(nameOf(c));
    added.push(...extra);
  }
  if (bad.length === 0) return undefined;
  return { reason: 'non-default capabilities', detail: `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(added))} in securityContext.capabilities.add` };
};

const hostPathVolumes: CheckPod = ({ spec }) => {
  const bad = arr(spec.volumes).filter((v): v is JsonObject => isObject(v) && isObject(v.hostPath)).map(nameOf);
  return bad.length > 0 ? { reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}` } : undefined;
};

const hostPorts: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containersOf(spec)) {
    const used = arr(c.ports).filter(isObject).map((p) => p.hostPort).filter((p) => typeof p === 'number' && p !== 0);
    if (used.length === 0) continue;
    bad.push(nameOf(c));
    ports.push(...used.map(String));
  }
  if (bad.length === 0) return undefined;
  const list = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', list.length)} ${list.join(', ')}`,
  };
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

const appArmorProfile: CheckPod = ({ annotations, spec }) => {
  const allowedType = (profile: JsonObject | undefined): boolean => profile === undefined || profile.type === 'RuntimeDefault' || profile.type === 'Localhost';
  const badValues: string[] = [];
  const podProfile = field(securityContextOf(spec), 'appArmorProfile');
  const podBad = !allowedType(podProfile);
  if (podBad) badValues.push(String(podProfile!.type ?? ''));
  const badContainers: string[] = [];
  for (const c of containersOf(spec)) {
    const profile = field(securityContextOf(c), 'appArmorProfile');
    if (allowedType(profile)) continue;
    badContainers.push(nameOf(c));
    badValues.push(String(profile!.type ?? ''));
  }
  const who = setters(podBad, badContainers);
  const forbidden = Object.entries(annotations)
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/')))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  const values = [...sortedSet(badValues), ...forbidden];
  if (forbidden.length > 0) who.push(pluralize('annotation', 'annotations', forbidden.length));
  if (who.length === 0) return undefined;
  return {
    reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', values.length),
    detail: `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
};

function seLinuxOptions(allowedTypes: ReadonlySet<string>): CheckPod {
  return ({ spec }) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    // Notes every way the options offend (all of them make the message), then whether any did.
    const valid = (opts: JsonObject): boolean => {
      const type = typeof opts.type === 'string' ? opts.type : '';
      const typeOk = allowedTypes.has(type);
      if (!typeOk) badTypes.push(type);
      const user = typeof opts.user === 'string' && opts.user !== '';
      const role = typeof opts.role === 'string' && opts.role !== '';
      setUser ||= user;
      setRole ||= role;
      return typeOk && !user && !role;
    };
    const podOpts = field(securityContextOf(spec), 'seLinuxOptions');
    const podBad = podOpts !== undefined && !valid(podOpts);
    const badContainers: string[] = [];
    for (const c of containersOf(spec)) {
      const opts = field(securityContextOf(c), 'seLinuxOptions');
      if (opts !== undefined && !valid(opts)) badContainers.push(nameOf(c));
    }
    const who = setters(podBad, badContainers);
    if (who.length === 0) return undefined;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return { reason: 'seLinuxOptions', detail: `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  };
}

const procMount: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containersOf(spec)) {
    const value = securityContextOf(c)?.procMount;
    if (value === undefined || value === null || value === 'Default') continue;
    bad.push(nameOf(c));
    types.push(String(value));
  }
  if (bad.length === 0) return undefined;
  return { reason: 'procMount', detail: `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` };
};

/** The seccomp profile types baseline and restricted allow. */
export function allowedSeccompType(type: unknown): boolean {
  return type === 'RuntimeDefault' || type === 'Localhost';
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

/** Before 1.19 seccomp was set by annotations, which policy versions up to 1.18 read. */
const seccompAnnotations: CheckPod = ({ annotations, spec }) => {
  const valid = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden: string[] = [];
  const podValue = annotations[SECCOMP_POD_ANNOTATION];
  if (podValue !== undefined && !valid(podValue)) forbidden.push(`${SECCOMP_POD_ANNOTATION}=${JSON.stringify(podValue)}`);
  for (const c of containersOf(spec)) {
    const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + nameOf(c);
    const v = annotations[key];
    if (v !== undefined && !valid(v)) forbidden.push(`${key}=${JSON.stringify(v)}`);
  }
  const list = sortedSet(forbidden);
  if (list.length === 0) return undefined;
  return { reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', list.length)} ${list.join(', ')}` };
};

/** Pod and containers that set a seccomp profile type other than RuntimeDefault or Localhost. */
export function explicitSeccompViolation(spec: JsonObject): Violation | undefined {
  const badValues: string[] = [];
  const podProfile = field(securityContextOf(spec), 'seccompProfile');
  const podBad = podProfile !== undefined && !allowedSeccompType(podProfile.type);
  if (podBad) badValues.push(String(podProfile!.type ?? ''));
  const badContainers: string[] = [];
  for (const c of containersOf(spec)) {
    const profile = field(securityContextOf(c), 'seccompProfile');
    if (profile === undefined || allowedSeccompType(profile.type)) continue;
    badContainers.push(nameOf(c));
    badValues.push(String(profile.type ?? ''));
  }
  const who = setters(podBad, badContainers);
  if (who.length === 0) return undefined;
  return { reason: 'seccompProfile', detail: `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(badValues))}` };
}

const seccompProfileBaseline: CheckPod = ({ spec }) => explicitSeccompViolation(spec);

function sysctls(allowed: ReadonlySet<string>): CheckPod {
  return ({ spec }) => {
    const names = arr(securityContextOf(spec)?.sysctls)
      .filter(isObject)
      .map((s) => String(s.name ?? ''));
    const forbidden = names.filter((n) => !allowed.has(n));
    return forbidden.length > 0 ? { reason: 'forbidden sysctls', detail: forbidden.join(', ') } : undefined;
  };
}

const windowsHostProcess: CheckPod = ({ spec }) => {
  const hostProcess = (o: JsonObject | undefined): boolean => field(securityContextOf(o ?? {}), 'windowsOptions')?.hostProcess === true;
  const bad = containersOf(spec).filter(hostProcess).map(nameOf);
  const who = setters(hostProcess(spec), bad);
  if (who.length === 0) return undefined;
  return { reason: 'hostProcess', detail: `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

/** Sysctls namespaced per pod and isolated from other pods: the "safe" set, grown by policy version. */
const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minimumVersion: 0, check: appArmorProfile }] },
  { id: CAPABILITIES_BASELINE, level: 'baseline', versions: [{ minimumVersion: 0, check: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minimumVersion: 0, check: hostNamespaces }] },
  { id: HOST_PATH_VOLUMES, level: 'baseline', versions: [{ minimumVersion: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minimumVersion: 0, check: hostPorts }] },
  { id: 'privileged', level: 'baseline', versions: [{ minimumVersion: 0, check: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minimumVersion: 0, check: procMount }] },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { minimumVersion: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: SECCOMP_BASELINE,
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: seccompAnnotations },
      { minimumVersion: 19, check: seccompProfileBaseline },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minimumVersion: 0, check: sysctls(new Set(SYSCTLS_1_0)) },
      { minimumVersion: 27, check: sysctls(new Set(SYSCTLS_1_27)) },
      { minimumVersion: 29, check: sysctls(new Set(SYSCTLS_1_29)) },
      { minimumVersion: 32, check: sysctls(new Set(SYSCTLS_1_32)) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minimumVersion: 0, check: windowsHostProcess }] },
];

