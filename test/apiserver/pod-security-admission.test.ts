// The PodSecurity admission plugin: enforce refuses, warn warns, namespace changes warn about the
// pods already there, exemptions skip, and unlabelled namespaces cost one lookup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podSecurity, type PodSecurityConfiguration } from '../../src/apiserver/admission/pod-security.js';
import type { AdmissionAttributes, Operation } from '../../src/apiserver/admission/plugin.js';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';

const pods = resourceTypeFor('', 'v1', 'pods')!;
const namespaces = resourceTypeFor('', 'v1', 'namespaces')!;
const deployments = resourceTypeFor('apps', 'v1', 'deployments')!;

const HARDENED = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };

function ns(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } } };
}

function podObj(name: string, namespace: string, container: Record<string, unknown> = {}, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ...extra }, spec: { containers: [{ name: 'app', image: 'nginx', ...container }] } };
}

class World {
  readonly namespaces = new Map<string, KubeObject>();
  readonly pods: KubeObject[] = [];
  lookups = 0;
  plugin;
  constructor(config: PodSecurityConfiguration = {}) {
    this.plugin = podSecurity(
      {
        cachedNamespace: (name) => {
          this.lookups++;
          return this.namespaces.get(name);
        },
        findNamespace: async (name) => this.namespaces.get(name),
        podsIn: (namespace) => this.pods.filter((p) => p.metadata.namespace === namespace),
      },
      config,
    );
  }

  add(o: KubeObject): void {
    if (o.kind === 'Namespace') this.namespaces.set(o.metadata.name!, o);
    else this.pods.push(o);
  }

  /** Runs validate; gives back the warnings, or the refusal's message as `refused: …`. */
  async admit(operation: Operation, resource: typeof pods, object: KubeObject, oldObject?: KubeObject, extra: Partial<AdmissionAttributes> = {}): Promise<string[]> {
    const warnings: string[] = [];
    const a: AdmissionAttributes = {
      operation,
      resource,
      subresource: '',
      namespace: object.metadata.namespace,
      name: object.metadata.name ?? '',
      object,
      oldObject,
      user: { name: 'alice', groups: [] },
      dryRun: false,
      warn: (w) => warnings.push(w),
      ...extra,
    };
    assert.ok(this.plugin.handles(operation, resource));
    try {
      await this.plugin.validate!(a);
    } catch (e) {
      assert.ok(isStatusError(e), String(e));
      return [`refused ${e.status.code}: ${e.message}`];
    }
    return warnings;
  }
}

test('enforce refuses a violating pod with upstream message, and admits a compliant one', async () => {
  const w = new World();
  w.add(ns('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
  assert.deepEqual(await w.admit('CREATE', pods, podObj('p', 'locked')), [
    'refused 403: pods "p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  ]);
  assert.deepEqual(await w.admit('CREATE', pods, podObj('q', 'locked', { securityContext: HARDENED })), []);
});

test('warn adds a warning and admits; a stricter warn than enforce warns about the difference only', async () => {
  const w = new World();
  w.add(ns('w', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/warn-version': 'v1.32' }));
  const warnings = await w.admit('CREATE', pods, podObj('p', 'w', { securityContext: { ...HARDENED, runAsNonRoot: undefined } }));
  assert.deepEqual(warnings, ['would violate PodSecurity "restricted:v1.32": runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)']);
  assert.match((await w.admit('CREATE', pods, podObj('h', 'w', { securityContext: { privileged: true } })))[0]!, /^refused 403: pods "h" is forbidden: violates PodSecurity "baseline:latest": privileged/);
});

test('pod controllers are never refused, and warned about their template at the warn level', async () => {
  const w = new World();
  w.add(ns('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
  w.add(ns('warned', { 'pod-security.kubernetes.io/warn': 'baseline' }));
  const deploy = (namespace: string): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace },
    spec: { template: { metadata: {}, spec: { hostNetwork: true, containers: [{ name: 'app', image: 'nginx' }] } } },
  });
  // Warn follows enforce when only enforce is labelled.
  assert.deepEqual(await w.admit('CREATE', deployments, deploy('locked')), [
    'would violate PodSecurity "restricted:latest": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  ]);
  assert.deepEqual(await w.admit('CREATE', deployments, deploy('warned')), ['would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)']);
  // Scale and status writes are not looked at.
  assert.deepEqual(await w.admit('UPDATE', deployments, deploy('warned'), deploy('warned'), { subresource: 'scale' }), []);
});

test('pod updates are checked only when an image or the containers change; status never', async () => {
  const w = new World();
  w.add(ns('locked', { 'pod-security.kubernetes.io/enforce': 'baseline' }));
  const old = podObj('p', 'locked', { securityContext: { privileged: true } });
  const labelled = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } };
  assert.deepEqual(await w.admit('UPDATE', pods, labelled, old), []);
  assert.deepEqual(await w.admit('UPDATE', pods, labelled, old, { subresource: 'status' }), []);
  const newImage = podObj('p', 'locked', { image: 'nginx:2', securityContext: { privileged: true } });
  assert.match((await w.admit('UPDATE', pods, newImage, old))[0]!, /^refused 403: pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged/);
  const debug = { ...old, spec: { ...(old.spec as object), ephemeralContainers: [{ name: 'dbg', image: 'busybox', securityContext: { privileged: true } }] } };
  assert.match((await w.admit('UPDATE', pods, debug, old, { subresource: 'ephemeralcontainers' }))[0]!, /container "app", "dbg"|containers "app", "dbg"/);
});

test('namespace labels: an invalid value is refused on create, and on update unless it was already there', async () => {
  const w = new World();
  assert.deepEqual(await w.admit('CREATE', namespaces, ns('x', { 'pod-security.kubernetes.io/enforce': 'strict' })), [
    'refused 422: Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
  ]);
  const bad = ns('y', { 'pod-security.kubernetes.io/warn-version': 'next' });
  assert.match((await w.admit('UPDATE', namespaces, bad, ns('y')))[0]!, /^refused 422: Namespace "y" is invalid: metadata.labels\[pod-security.kubernetes.io\/warn-version\]: Invalid value: "next": must be "latest" or "v1.x"$/);
  const stillBad = ns('y', { 'pod-security.kubernetes.io/warn-version': 'next', other: 'label' });
  assert.deepEqual(await w.admit('UPDATE', namespaces, stillBad, bad), []);
});

test('audit labels are only validated: an invalid one is refused, a valid one neither refuses nor warns', async () => {
  const w = new World();
  assert.match((await w.admit('CREATE', namespaces, ns('x', { 'pod-security.kubernetes.io/audit': 'strict' })))[0]!, /^refused 422: .*labels\[pod-security.kubernetes.io\/audit\]: Invalid value: "strict"/);
  w.add(ns('audited', { 'pod-security.kubernetes.io/audit': 'restricted', 'pod-security.kubernetes.io/audit-version': 'v1.25' }));
  assert.deepEqual(await w.admit('CREATE', pods, podObj('p', 'audited', { securityContext: { privileged: true } })), []);
});

test('a stricter enforce level warns about the pods already in the namespace', async () => {
  const w = new World();
  w.add(ns('apps'));
  const owner = (uid: string) => ({ ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }] });
  w.add(podObj('web-2', 'apps', {}, owner('u1')));
  w.add(podObj('web-1', 'apps', {}, owner('u1')));
  w.add(podObj('web-3', 'apps', {}, owner('u1')));
  w.add(podObj('root', 'apps', { securityContext: { privileged: true } }));
  w.add(podObj('fine', 'apps', { securityContext: HARDENED }));
  w.add(podObj('elsewhere', 'other', { securityContext: { privileged: true } }));
  const restricted = ns('apps', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  assert.deepEqual(await w.admit('UPDATE', namespaces, restricted, ns('apps')), [
    'existing pods in namespace "apps" violate the new PodSecurity enforce level "restricted:latest"',
    'root: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    'web-1 (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
  ]);
  // Relaxing, or relabelling to the same level, says nothing.
  assert.deepEqual(await w.admit('UPDATE', namespaces, ns('apps', { 'pod-security.kubernetes.io/enforce': 'baseline' }), restricted), []);
  assert.deepEqual(await w.admit('UPDATE', namespaces, ns('apps', { 'pod-security.kubernetes.io/enforce': 'restricted', x: 'y' }), restricted), []);
  // A different version of the same level is checked again.
  assert.deepEqual(await w.admit('UPDATE', namespaces, ns('apps', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.20' }), ns('apps', { 'pod-security.kubernetes.io/enforce': 'baseline' })), [
    'existing pods in namespace "apps" violate the new PodSecurity enforce level "baseline:v1.20"',
    'root: privileged',
  ]);
});

test('exemptions: namespaces, users and runtime classes are not checked; an exempt namespace asking for a policy is told', async () => {
  const w = new World({ exemptions: { namespaces: ['kube-system'], usernames: ['system:serviceaccount:kube-system:daemon-set-controller'], runtimeClasses: ['kata'] } });
  w.add(ns('kube-system', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
  w.add(ns('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' }));
  assert.deepEqual(await w.admit('CREATE', pods, podObj('p', 'kube-system', { securityContext: { privileged: true } })), []);
  assert.deepEqual(await w.admit('CREATE', pods, podObj('p', 'locked'), undefined, { user: { name: 'system:serviceaccount:kube-system:daemon-set-controller', groups: [] } }), []);
  const kata = podObj('k', 'locked');
  (kata.spec as Record<string, unknown>).runtimeClassName = 'kata';
  assert.deepEqual(await w.admit('CREATE', pods, kata), []);
  assert.deepEqual(await w.admit('UPDATE', namespaces, ns('kube-system', { 'pod-security.kubernetes.io/enforce': 'restricted' }), ns('kube-system')), [
    'namespace "kube-system" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored',
  ]);
});

test('defaults from the configuration apply to unlabelled namespaces', async () => {
  const w = new World({ defaults: { enforce: 'baseline', warn: 'restricted' } });
  w.add(ns('plain'));
  assert.match((await w.admit('CREATE', pods, podObj('p', 'plain', { securityContext: { privileged: true } })))[0]!, /violates PodSecurity "baseline:latest": privileged/);
  assert.equal((await w.admit('CREATE', pods, podObj('q', 'plain'))).length, 1);
  assert.throws(() => podSecurity({ cachedNamespace: () => undefined, findNamespace: async () => undefined, podsIn: () => [] }, { defaults: { enforce: 'strict' } }), /defaults.enforce: must be one of/);
});

test('an unlabelled namespace decides synchronously, from the cached namespace', () => {
  const w = new World();
  w.add(ns('plain'));
  const a: AdmissionAttributes = {
    operation: 'CREATE', resource: pods, subresource: '', namespace: 'plain', name: 'p', object: podObj('p', 'plain', { securityContext: { privileged: true } }), oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false,
  };
  assert.equal(w.plugin.validate!(a), undefined);
  assert.equal(w.lookups, 1);
});
