// Pod Security Standards checks: pods and the messages upstream's policy gives for them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePod, violationDetail, violationReasons, NEWEST_POLICY_VERSION } from '../../src/api/pod-security/evaluator.js';
import { LATEST, levelVersionString, policyFromLabels, type Level, type Policy } from '../../src/api/pod-security/policy.js';
import type { PodParts } from '../../src/api/pod-security/check.js';
import type { JsonObject } from '../../src/api/kinds/json.js';

const good: JsonObject = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };

function c(name: string, securityContext?: JsonObject, extra: JsonObject = {}): JsonObject {
  return { name, image: 'nginx', ...(securityContext ? { securityContext } : {}), ...extra };
}

function pod(spec: JsonObject, annotations: Record<string, string> = {}): PodParts {
  return { annotations, spec };
}

/** The detail a refusal at level:version shows ('' when the pod passes). */
function detail(level: Level, p: PodParts, version = LATEST): string {
  return violationDetail(evaluatePod({ level, version }, p));
}

const BASELINE_CASES: [string, PodParts, string][] = [
  ['a plain pod passes', pod({ containers: [c('app')] }), ''],
  ['host namespaces', pod({ hostNetwork: true, hostPID: true, hostIPC: true, containers: [c('app')] }), 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)'],
  ['privileged', pod({ containers: [c('a', { privileged: true }), c('b', { privileged: false })] }), 'privileged (container "a" must not set securityContext.privileged=true)'],
  [
    'capabilities beyond the default set',
    pod({ initContainers: [c('i', { capabilities: { add: ['NET_ADMIN', 'CHOWN'] } })], containers: [c('a', { capabilities: { add: ['SYS_ADMIN', 'NET_ADMIN'] } })] }),
    'non-default capabilities (containers "i", "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)',
  ],
  ['default capabilities may be added', pod({ containers: [c('a', { capabilities: { add: ['CHOWN', 'NET_BIND_SERVICE', 'KILL'] } })] }), ''],
  ['hostPath volumes', pod({ containers: [c('a')], volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }] }), 'hostPath volumes (volume "h")'],
  [
    'host ports, sorted as text',
    pod({ containers: [c('a', undefined, { ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81, hostPort: 10000 }] }), c('b', undefined, { ports: [{ containerPort: 1, hostPort: 0 }] })] }),
    'hostPort (container "a" uses hostPorts 10000, 8080)',
  ],
  [
    'AppArmor profile fields and annotations',
    pod({ securityContext: { appArmorProfile: { type: 'Unconfined' } }, containers: [c('a', { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } })] }, {
      'container.apparmor.security.beta.kubernetes.io/a': 'unconfined',
      'container.apparmor.security.beta.kubernetes.io/b': 'runtime/default',
    }),
    'forbidden AppArmor profiles (pod and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"")',
  ],
  [
    'SELinux type, user and role',
    pod({ securityContext: { seLinuxOptions: { type: 'foo' } }, containers: [c('a', { seLinuxOptions: { user: 'u', role: 'r', type: 'bar' } }), c('b', { seLinuxOptions: { type: 'container_engine_t' } })] }),
    'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set)',
  ],
  ['procMount', pod({ containers: [c('a', { procMount: 'Unmasked' }), c('b', { procMount: 'Default' })] }), 'procMount (container "a" must not set securityContext.procMount to "Unmasked")'],
  [
    'seccomp Unconfined',
    pod({ securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [c('a', { seccompProfile: { type: 'Unconfined' } })] }),
    'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
  ],
  [
    'sysctls outside the safe set',
    pod({ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.ipv4.tcp_rmem', value: '1' }, { name: 'net.core.somaxconn', value: '1' }] }, containers: [c('a')] }),
    'forbidden sysctls (kernel.msgmax, net.core.somaxconn)',
  ],
  [
    'Windows host process',
    pod({ securityContext: { windowsOptions: { hostProcess: true } }, containers: [c('a', { windowsOptions: { hostProcess: true } })] }),
    'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)',
  ],
  [
    'several checks, in upstream order',
    pod({ hostNetwork: true, containers: [c('a', { privileged: true, capabilities: { add: ['NET_RAW'] } })] }),
    'non-default capabilities (container "a" must not include "NET_RAW" in securityContext.capabilities.add), host namespaces (hostNetwork=true), privileged (container "a" must not set securityContext.privileged=true)',
  ],
];

for (const [name, p, expected] of BASELINE_CASES) {
  test(`baseline: ${name}`, () => assert.equal(detail('baseline', p), expected));
}

const RESTRICTED_CASES: [string, PodParts, string][] = [
  ['a hardened pod passes', pod({ containers: [c('app', good)] }), ''],
  ['pod-level runAsNonRoot and seccomp cover containers', pod({ securityContext: { runAsNonRoot: true, seccompProfile: { type: 'Localhost', localhostProfile: 'p' } }, containers: [c('app', { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })] }), ''],
  [
    'kubectl run\'s pod (the message the task quotes)',
    pod({ containers: [c('app')] }),
    'allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  ],
  [
    'capabilities: drop ALL, add only NET_BIND_SERVICE',
    pod({ containers: [c('a', { ...good, capabilities: { drop: ['NET_RAW'], add: ['CHOWN', 'NET_BIND_SERVICE'] } }), c('b', { ...good, capabilities: { drop: ['ALL'], add: ['SYS_TIME'] } })] }),
    'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b" must not include "CHOWN", "SYS_TIME" in securityContext.capabilities.add)',
  ],
  [
    'restricted volume types replace the hostPath check',
    pod({ containers: [c('a', good)], volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'n', nfs: { server: 's', path: '/' } }, { name: 'cm', configMap: { name: 'x' } }, { name: 'g', gitRepo: { repository: 'r' } }] }),
    'restricted volume types (volumes "h", "n", "g" use restricted volume types "gitRepo", "hostPath", "nfs")',
  ],
  ['an unknown volume source', pod({ containers: [c('a', good)], volumes: [{ name: 'x', image: { reference: 'i' } }] }), 'restricted volume types (volume "x" uses restricted volume type "unknown")'],
  [
    'runAsNonRoot=false set explicitly',
    pod({ securityContext: { runAsNonRoot: false }, containers: [c('a', { ...good, runAsNonRoot: false }), c('b', { ...good, runAsNonRoot: undefined })] }),
    'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)',
  ],
  ['runAsUser=0', pod({ securityContext: { runAsUser: 0 }, containers: [c('a', { ...good, runAsUser: 0 }), c('b', { ...good, runAsUser: 1000 })] }), 'runAsUser=0 (pod and container "a" must not set runAsUser=0)'],
  [
    'seccomp: explicit bad values come before missing ones',
    pod({ containers: [c('a', { ...good, seccompProfile: { type: 'Unconfined' } }), c('b', { ...good, seccompProfile: undefined })] }),
    'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
  ],
  [
    'ephemeral and init containers are checked too',
    pod({ initContainers: [c('init', { ...good, allowPrivilegeEscalation: true })], containers: [c('a', good)], ephemeralContainers: [c('debug', { ...good, allowPrivilegeEscalation: undefined })] }),
    'allowPrivilegeEscalation != false (containers "init", "debug" must set securityContext.allowPrivilegeEscalation=false)',
  ],
  ['a Windows pod skips the Linux-only fields', pod({ os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [c('a')] }), ''],
  [
    'baseline checks run at restricted too',
    pod({ hostPID: true, containers: [c('a', { ...good, privileged: true })] }),
    'host namespaces (hostPID=true), privileged (container "a" must not set securityContext.privileged=true)',
  ],
];

for (const [name, p, expected] of RESTRICTED_CASES) {
  test(`restricted: ${name}`, () => assert.equal(detail('restricted', p), expected));
}

test('privileged allows anything', () => {
  assert.equal(detail('privileged', pod({ hostNetwork: true, containers: [c('a', { privileged: true })] })), '');
});

test('older policy versions: the checks as they were', () => {
  const plain = pod({ containers: [c('app')] });
  // Before 1.22 restricted did not ask for dropped capabilities; before 1.19 not for a seccomp profile; before 1.8 nothing about escalation.
  assert.equal(violationReasons(evaluatePod({ level: 'restricted', version: 21 }, plain)), 'allowPrivilegeEscalation != false, runAsNonRoot != true, seccompProfile');
  assert.equal(violationReasons(evaluatePod({ level: 'restricted', version: 18 }, plain)), 'allowPrivilegeEscalation != false, runAsNonRoot != true');
  assert.equal(violationReasons(evaluatePod({ level: 'restricted', version: 7 }, plain)), 'runAsNonRoot != true');
  // runAsUser=0 is refused from 1.23.
  const root = pod({ securityContext: { runAsUser: 0 }, containers: [c('a', good)] });
  assert.equal(detail('restricted', root, 22), '');
  assert.equal(detail('restricted', root, 23), 'runAsUser=0 (pod must not set runAsUser=0)');
  // Before 1.22 restricted runs baseline's capability check in place of its own.
  assert.equal(detail('restricted', pod({ containers: [c('a', { ...good, capabilities: { add: ['SYS_ADMIN'] } })] }), 21), 'non-default capabilities (container "a" must not include "SYS_ADMIN" in securityContext.capabilities.add)');
  // The safe sysctls grew at 1.27, 1.29 and 1.32.
  const sysctl = (name: string) => pod({ securityContext: { sysctls: [{ name, value: '1' }] }, containers: [c('a')] });
  assert.equal(detail('baseline', sysctl('net.ipv4.tcp_wmem'), 31), 'forbidden sysctls (net.ipv4.tcp_wmem)');
  assert.equal(detail('baseline', sysctl('net.ipv4.tcp_wmem'), 32), '');
  assert.equal(detail('baseline', sysctl('net.ipv4.ip_local_reserved_ports'), 26), 'forbidden sysctls (net.ipv4.ip_local_reserved_ports)');
  // container_engine_t is an allowed SELinux type from 1.31.
  const engine = pod({ containers: [c('a', { seLinuxOptions: { type: 'container_engine_t' } })] });
  assert.equal(detail('baseline', engine, 30), 'seLinuxOptions (container "a" set forbidden securityContext.seLinuxOptions: type "container_engine_t")');
  assert.equal(detail('baseline', engine, 31), '');
  // Before 1.19 seccomp came from annotations; the fields are not read then (and the annotations are not read after).
  const annotated = pod({ containers: [c('a'), c('b')] }, { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/b': 'docker/default', 'container.seccomp.security.alpha.kubernetes.io/a': 'unknown' });
  assert.equal(detail('baseline', annotated, 18), 'seccompProfile (forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unknown", seccomp.security.alpha.kubernetes.io/pod="unconfined")');
  assert.equal(detail('baseline', annotated, 19), '');
  // A Windows pod is exempt from the Linux-only restricted checks only from 1.25.
  const windows = pod({ os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [c('a')] });
  assert.equal(violationReasons(evaluatePod({ level: 'restricted', version: 24 }, windows)), 'allowPrivilegeEscalation != false, unrestricted capabilities, seccompProfile');
  // Versions past the newest change evaluate as it.
  assert.equal(NEWEST_POLICY_VERSION, 32);
  assert.equal(detail('baseline', sysctl('net.ipv4.tcp_wmem'), 40), '');
});

const privilegedLatest = { level: 'privileged', version: LATEST } as const;
const DEFAULTS: Policy = { enforce: privilegedLatest, audit: privilegedLatest, warn: privilegedLatest };

test('namespace labels: levels, versions, and warn following a stricter enforce', () => {
  const { policy, errors } = policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'v1.25' }, DEFAULTS);
  assert.deepEqual(errors, []);
  assert.equal(levelVersionString(policy.enforce), 'restricted:v1.25');
  assert.equal(levelVersionString(policy.warn), 'restricted:v1.25');
  assert.equal(levelVersionString(policy.audit), 'privileged:latest');
  const own = policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn-version': 'v1.30' }, DEFAULTS).policy;
  assert.equal(levelVersionString(own.warn), 'baseline:v1.30');
  const warnSet = policyFromLabels({ 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' }, DEFAULTS).policy;
  assert.equal(levelVersionString(warnSet.warn), 'baseline:latest');
});

test('namespace labels: invalid values evaluate strictly for enforce, openly for audit and warn', () => {
  const { policy, errors } = policyFromLabels(
    { 'pod-security.kubernetes.io/enforce': 'strict', 'pod-security.kubernetes.io/enforce-version': '1.25', 'pod-security.kubernetes.io/warn': 'loud', 'pod-security.kubernetes.io/audit-version': 'v1.025' },
    DEFAULTS,
  );
  assert.equal(levelVersionString(policy.enforce), 'restricted:latest');
  // An invalid enforce level does not make warn follow it.
  assert.equal(levelVersionString(policy.warn), 'privileged:latest');
  assert.deepEqual(
    errors.map((e) => `${e.field}: ${e.message}`),
    [
      'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "1.25": must be "latest" or "v1.x"',
      'metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "v1.025": must be "latest" or "v1.x"',
      'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted',
    ],
  );
});
