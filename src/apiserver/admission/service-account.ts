// ServiceAccount admission: a pod runs as a service account (its namespace's `default` unless it
// names one), which must exist, and gets that account's token mounted unless it opts out.
import { forbidden } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import { API_ACCESS_VOLUME_PREFIX, SERVICE_ACCOUNT_MOUNT_PATH } from '../../api/kinds/pod.js';
import { generatedNameSuffix } from '../../util/random.js';
import { isCore, type AdmissionPlugin } from './plugin.js';

/** A pod that names no service account runs as its namespace's `default`. */
export function defaultServiceAccount(pod: KubeObject): void {
  const spec = (pod.spec ??= {}) as { serviceAccountName?: string; serviceAccount?: string };
  if (spec.serviceAccountName) return;
  spec.serviceAccountName = 'default';
  spec.serviceAccount = 'default';
}

interface MountingSpec {
  automountServiceAccountToken?: boolean;
  volumes?: { name: string; [k: string]: unknown }[];
  containers?: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
  initContainers?: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
}

/**
 * The token volume: unless the pod or its service account opts out, or a
 * container already mounts something there, a projected volume of a bound token (renewed by the
 * node), the cluster CA (the kube-root-ca.crt ConfigMap) and the namespace, mounted read-only in
 * every container — so in-cluster clients work unchanged.
 */
export function mountServiceAccountToken(pod: KubeObject, account: KubeObject | undefined, suffix: string): void {
  const spec = (pod.spec ??= {}) as MountingSpec;
  const accountSays = (account as { automountServiceAccountToken?: boolean } | undefined)?.automountServiceAccountToken;
  if (spec.automountServiceAccountToken === false || (spec.automountServiceAccountToken === undefined && accountSays === false)) return;
  // Admission runs before validation: a spec of the wrong shape is left for validation to refuse.
  const shaped = (v: unknown) => v === undefined || Array.isArray(v);
  if (!shaped(spec.containers) || !shaped(spec.initContainers) || !shaped(spec.volumes)) return;
  const containers = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  if (containers.some((c) => c === null || typeof c !== 'object' || !shaped(c.volumeMounts))) return;
  if (containers.some((c) => (c.volumeMounts ?? []).some((m) => m?.mountPath === SERVICE_ACCOUNT_MOUNT_PATH))) return;
  const name = `${API_ACCESS_VOLUME_PREFIX}${suffix}`;
  spec.volumes = [
    ...(spec.volumes ?? []),
    {
      name,
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
  ];
  for (const c of containers) c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
}

export interface ServiceAccountLookup {
  /** The account as the watch cache holds it (undefined: not seen, maybe not yet). */
  cached(namespace: string, name: string): KubeObject | undefined;
  /** The account from the cache, or from storage when the cache has not seen it. */
  find(namespace: string, name: string): Promise<KubeObject | undefined>;
}

export function serviceAccountAdmission(accounts: ServiceAccountLookup): AdmissionPlugin {
  const accountName = (pod: KubeObject): string | undefined => ((pod.spec ?? {}) as { serviceAccountName?: string }).serviceAccountName;
  return {
    name: 'ServiceAccount',
    handles: (op, rt) => op === 'CREATE' && isCore(rt, 'pods'),
    mutate: (a) => {
      const pod = a.object;
      if (a.subresource !== '' || !pod) return;
      defaultServiceAccount(pod);
      mountServiceAccountToken(pod, accounts.cached(pod.metadata.namespace ?? '', accountName(pod) ?? 'default'), generatedNameSuffix());
    },
    // A pod may only run as an account that exists. The namespace's `default` account is exempt:
    // its controller makes it moments after the namespace, and a pod created in between (upstream
    // refuses it and controllers retry) would only fail for that race.
    validate: async (a) => {
      const pod = a.object;
      if (a.subresource !== '' || !pod) return;
      const name = accountName(pod);
      const ns = pod.metadata.namespace ?? '';
      if (!name || name === 'default' || (await accounts.find(ns, name))) return;
      throw forbidden(`pods "${pod.metadata.name}" is forbidden: error looking up service account ${ns}/${name}: serviceaccount "${name}" not found`, 'pods', '', pod.metadata.name);
    },
  };
}
