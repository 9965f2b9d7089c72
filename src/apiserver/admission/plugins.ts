// The API server's admission plugins, each wired to what it reads (the watch cache, storage, the
// webhook caller): the one list of them, which ./chain.ts puts in upstream's order.
import type { LimitRange } from '../../api/kinds/limitrange.js';
import { SCHEDULING_GROUP, type PriorityClass } from '../../api/kinds/priorityclass.js';
import type { ServiceRange } from '../../api/service-range.js';
import type { Clock } from '../../util/clock.js';
import type { ObjectStore } from '../object-store.js';
import type { RbacAuthorizer } from '../rbac-authorizer.js';
import type { WriteContext } from '../request-context.js';
import { alwaysMatch } from '../watch-cache.js';
import { orderedChain } from './chain.js';
import { certificateApproval } from './certificate-approval.js';
import { certificateSigning } from './certificate-signing.js';
import { certificateSubjectRestriction } from './certificate-subject-restriction.js';
import { defaultStorageClassAdmission } from './default-storage-class.js';
import { defaultTolerationSeconds, type DefaultTolerationOptions } from './default-toleration-seconds.js';
import { limitRanger } from './limit-ranger.js';
import { mutatingAdmissionWebhook } from './mutating-webhook.js';
import { namespaceLifecycle } from './namespace-lifecycle.js';
import { nodeRestriction, type DeletedNodeLabels } from './node-restriction.js';
import type { AdmissionChain } from './plugin.js';
import { podSecurity, type PodSecurityConfiguration } from './pod-security.js';
import { priorityAdmission } from './priority.js';
import { rbacEscalation } from './rbac-escalation.js';
import { resourceQuotaAdmission } from './resource-quota.js';
import { serviceAccountAdmission } from './service-account.js';
import { serviceAddresses } from './service-addresses.js';
import { storageObjectInUseProtection } from './storage-object-in-use-protection.js';
import { validatingAdmissionWebhook, type AdmissionWebhookDeps } from './validating-webhook.js';

/** Admission plugins' settings (upstream's flags and --admission-control-config-file). */
export type AdmissionSettings = Partial<DefaultTolerationOptions> & { podSecurity?: PodSecurityConfiguration };

/** What the plugins read, from the server that runs them. */
export interface AdmissionWiring {
  /** Looked up when a plugin first asks: the stores are made after the chain. */
  storeByResource(group: string, resource: string): ObjectStore;
  namespacePhase(name: string): Promise<'Active' | 'Terminating' | undefined>;
  deletedNodeLabels: DeletedNodeLabels;
  rbac: RbacAuthorizer;
  serviceRange: ServiceRange;
  clock: Clock;
  settings: AdmissionSettings;
  webhookDeps(resource: 'validatingwebhookconfigurations' | 'mutatingwebhookconfigurations'): AdmissionWebhookDeps;
  /** The context of the server's own writes (a quota's charge). */
  systemContext(): WriteContext;
}

export function admissionPlugins(w: AdmissionWiring): AdmissionChain {
  const core = (resource: string): ObjectStore => w.storeByResource('', resource);
  return orderedChain([
    namespaceLifecycle({ phaseOf: (ns) => w.namespacePhase(ns) }),
    serviceAccountAdmission({ cached: (ns, name) => core('serviceaccounts').cached(ns, name), find: (ns, name) => core('serviceaccounts').cachedOrStored(ns, name) }),
    nodeRestriction(w.deletedNodeLabels),
    defaultTolerationSeconds({
      defaultNotReadyTolerationSeconds: w.settings.defaultNotReadyTolerationSeconds ?? 300,
      defaultUnreachableTolerationSeconds: w.settings.defaultUnreachableTolerationSeconds ?? 300,
    }),
    defaultStorageClassAdmission(() => w.storeByResource('storage.k8s.io', 'storageclasses').cache.objectsUnder('/registry/storageclasses/')),
    storageObjectInUseProtection(),
    certificateApproval(w.rbac),
    certificateSigning(w.rbac),
    certificateSubjectRestriction(),
    serviceAddresses(() => core('services').cache.list(alwaysMatch, '/registry/services/').items, w.serviceRange),
    rbacEscalation(w.rbac),
    resourceQuotaAdmission(
      {
        cached: (ns) => core('resourcequotas').cache.objectsUnder(`/registry/resourcequotas/${ns}/`),
        stored: (ns, name) => core('resourcequotas').tryGet(ns, name),
        writeUsed: (quota, used) =>
          core('resourcequotas').update(
            quota.metadata.namespace,
            quota.metadata.name!,
            (current) => {
              current.status = { ...(current.status as Record<string, unknown> | undefined), used };
              // Charged against what was read: a quota changed since is read and checked again.
              current.metadata.resourceVersion = quota.metadata.resourceVersion;
              return current;
            },
            w.systemContext(),
            { subresource: 'status' },
          ),
      },
      w.clock,
    ),
    limitRanger({ inNamespace: (ns) => core('limitranges').cache.objectsUnder(`/registry/limitranges/${ns}/`) as LimitRange[] }),
    validatingAdmissionWebhook(w.webhookDeps('validatingwebhookconfigurations')),
    mutatingAdmissionWebhook(w.webhookDeps('mutatingwebhookconfigurations')),
    podSecurity(
      {
        cachedNamespace: (name) => core('namespaces').cached(undefined, name),
        findNamespace: (name) => core('namespaces').cachedOrStored(undefined, name),
        podsIn: (ns) => core('pods').cache.objectsUnder(`/registry/pods/${ns}/`),
      },
      w.settings.podSecurity,
    ),
    priorityAdmission({
      list: () => w.storeByResource(SCHEDULING_GROUP, 'priorityclasses').cache.objectsUnder('/registry/priorityclasses/') as PriorityClass[],
      find: async (name) => (await w.storeByResource(SCHEDULING_GROUP, 'priorityclasses').cachedOrStored(undefined, name)) as PriorityClass | undefined,
    }),
  ]);
}
