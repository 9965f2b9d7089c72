// The restricted level's checks: current pod hardening practice, on top of baseline (some replace
// a baseline check from the version they start at), with upstream's reasons and details.
import { arr, isObject, type JsonObject } from '../kinds/json.js';
import { CAPABILITIES_BASELINE, HOST_PATH_VOLUMES, SECCOMP_BASELINE, allowedSeccompType, explicitSeccompViolation } from './baseline.js';
import {
  containersOf,
  containersPhrase,
  field,
  isWindowsPod,
  joinQuote,
  nameOf,
  pluralize,
  securityContextOf,
  setters,
  sortedSet,
  type Check,
  type CheckPod,
} from './check.js';

/** From 1.25 a Windows pod passes checks of fields that do not exist on Windows. */
function exceptWindows(check: CheckPod): CheckPod {
  return (pod) => (isWindowsPod(pod.spec) ? undefined : check(pod));
}

const allowPrivilegeEscalation: CheckPod = ({ spec }) => {
  const bad = containersOf(spec)
    .filter((c) => securityContextOf(c)?.allowPrivilegeEscalation !== false)
    .map(nameOf);
  if (bad.length === 0) return undefined;
  return { reason: 'allowPrivilegeEscalation != false', detail: `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false` };
};

const capabilitiesRestricted: CheckPod = ({ spec }) => {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbidden: string[] = [];
  for (const c of containersOf(spec)) {
    const caps = field(securityContextOf(c), 'capabilities');
    if (caps === undefined) {
      missingDropAll.push(nameOf(c));
      continue;
    }
    if (!arr(caps.drop).includes('ALL')) missingDropAll.push(nameOf(c));
    const extra = arr(caps.add)
      .map(String)
      .filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length > 0) {
      addingForbidden.push(nameOf(c));
      forbidden.push(...extra);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length > 0) details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (addingForbidden.length > 0) details.push(`${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`);
  return details.length > 0 ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
};

/** Volume sources a restricted pod may use: none reaches the node or the network by itself. */
const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
/** The sources named in the message, in the order upstream tells them apart. */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs',
  'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
];

const restrictedVolumes: CheckPod = ({ spec }) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of arr(spec.volumes)) {
    if (!isObject(v)) continue;
    if (ALLOWED_VOLUME_SOURCES.some((k) => isObject(v[k]))) continue;
    bad.push(nameOf(v));
    types.push(RESTRICTED_VOLUME_SOURCES.find((k) => isObject(v[k])) ?? 'unknown');
  }
  if (bad.length === 0) return undefined;
  const list = sortedSet(types);
  return {
    reason: 'restricted volume types',
    detail: `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', list.length)} ${joinQuote(list)}`,
  };
};

/**
 * A setting the pod may make once for all containers (runAsNonRoot, seccompProfile): who set a
 * bad value explicitly, and which containers are left without a good one.
 */
interface PodWideSetting {
  podBad: boolean;
  explicitlyBad: string[];
  implicitlyBad: string[];
}

function podWide(spec: JsonObject, read: (securityContext: JsonObject | undefined) => 'unset' | 'good' | 'bad'): PodWideSetting {
  const pod = read(securityContextOf(spec));
  const out: PodWideSetting = { podBad: pod === 'bad', explicitlyBad: [], implicitlyBad: [] };
  for (const c of containersOf(spec)) {
    const own = read(securityContextOf(c));
    if (own === 'bad') out.explicitlyBad.push(nameOf(c));
    else if (own === 'unset' && pod !== 'good') out.implicitlyBad.push(nameOf(c));
  }
  return out;
}

const runAsNonRoot: CheckPod = ({ spec }) => {
  const s = podWide(spec, (sc) => {
    const v = sc?.runAsNonRoot;
    return typeof v !== 'boolean' ? 'unset' : v ? 'good' : 'bad';
  });
  if (s.podBad || s.explicitlyBad.length > 0) return { reason: 'runAsNonRoot != true', detail: `${setters(s.podBad, s.explicitlyBad).join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (s.implicitlyBad.length > 0) return { reason: 'runAsNonRoot != true', detail: `pod or ${containersPhrase(s.implicitlyBad)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

const runAsUser: CheckPod = ({ spec }) => {
  const root = (o: JsonObject): boolean => securityContextOf(o)?.runAsUser === 0;
  const who = setters(root(spec), containersOf(spec).filter(root).map(nameOf));
  return who.length > 0 ? { reason: 'runAsUser=0', detail: `${who.join(' and ')} must not set runAsUser=0` } : undefined;
};

const seccompProfileRestricted: CheckPod = ({ spec }) => {
  const explicit = explicitSeccompViolation(spec);
  if (explicit) return explicit;
  const s = podWide(spec, (sc) => {
    const profile = field(sc, 'seccompProfile');
    return profile === undefined ? 'unset' : allowedSeccompType(profile.type) ? 'good' : 'bad';
  });
  if (s.implicitlyBad.length === 0) return undefined;
  return { reason: 'seccompProfile', detail: `pod or ${containersPhrase(s.implicitlyBad)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
};

export const RESTRICTED_CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minimumVersion: 8, check: allowPrivilegeEscalation },
      { minimumVersion: 25, check: exceptWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: 22, check: capabilitiesRestricted, overrides: [CAPABILITIES_BASELINE] },
      { minimumVersion: 25, check: exceptWindows(capabilitiesRestricted), overrides: [CAPABILITIES_BASELINE] },
    ],
  },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minimumVersion: 0, check: restrictedVolumes, overrides: [HOST_PATH_VOLUMES] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minimumVersion: 0, check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minimumVersion: 23, check: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minimumVersion: 19, check: seccompProfileRestricted, overrides: [SECCOMP_BASELINE] },
      { minimumVersion: 25, check: exceptWindows(seccompProfileRestricted), overrides: [SECCOMP_BASELINE] },
    ],
  },
];
