// PodSecurity admission through real kubectl (1.27 and 1.33) and @kubernetes/client-node: a
// namespace's enforce label refuses a non-compliant pod with upstream's message and admits a
// hardened one; warn labels make kubectl print upstream's warnings for pods and pod controllers;
// tightening a namespace's enforce level warns about the pods already in it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { TestServer } from '../support/cluster.js';

const RESTRICTED_DETAIL =
  'allowPrivilegeEscalation != false (container "p" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "p" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "p" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "p" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

const hardenedPod = (name: string, namespace: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: app
    image: nginx
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
`;

const privilegedPod = (name: string, namespace: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  containers:
  - name: app
    image: nginx
    securityContext: {privileged: true}
`;

/** `--admission-control-config-file`: the namespace `exempt` is not checked. */
const ADMISSION_CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: privileged, enforce-version: latest}
    exemptions: {namespaces: [exempt]}
`;

const hostNetworkDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: warned}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      containers: [{name: agent, image: nginx}]
`;

describe('PodSecurity admission with kubectl and client-node', () => {
  const s = new TestServer('pod-security');
  before(async () => {
    const config = join(s.dataDir, 'admission.yaml');
    writeFileSync(config, ADMISSION_CONFIG);
    await s.start(['--admission-control-config-file', config]);
    for (const ns of ['locked', 'warned', 'strict-warned', 'apps', 'exempt']) await s.k(['create', 'namespace', ns]);
    await s.k(['label', 'namespace', 'locked', 'pod-security.kubernetes.io/enforce=restricted']);
    await s.k(['label', 'namespace', 'warned', 'pod-security.kubernetes.io/warn=baseline']);
    await s.k(['label', 'namespace', 'strict-warned', 'pod-security.kubernetes.io/warn=restricted']);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('refuses a non-compliant pod with upstream message and admits a hardened one', async () => {
    for (const version of ['1.27', '1.33']) {
      const r = await s.kubectl(['-n', 'locked', 'run', 'p', '--image=nginx', '--restart=Never'], { version });
      assert.notEqual(r.code, 0, `kubectl ${version} ran a non-compliant pod`);
      assert.equal(r.stderr.trim(), `Error from server (Forbidden): pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`);
      const ok = await s.kubectl(['create', '-f', '-'], { version, input: hardenedPod(`hardened-${version.replace('.', '-')}`, 'locked') });
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stderr, '', 'a compliant pod draws no warning');
    }
  });

  it("prints upstream's warning for a pod controller's template (warn=baseline and warn=restricted)", async () => {
    for (const version of ['1.27', '1.33']) {
      const suffix = version.replace('.', '-');
      // A plain `kubectl create deployment` breaks no baseline rule; restricted it does.
      const plain = await s.kubectl(['-n', 'warned', 'create', 'deployment', `web-${suffix}`, '--image=nginx'], { version });
      assert.equal(plain.code, 0, plain.stderr);
      assert.equal(plain.stderr, '');
      const strict = await s.kubectl(['-n', 'strict-warned', 'create', 'deployment', `web-${suffix}`, '--image=nginx'], { version });
      assert.equal(strict.code, 0, strict.stderr);
      assert.equal(
        strict.stderr.trim(),
        `Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL.replaceAll('"p"', '"nginx"')}`,
      );
      assert.match(strict.stdout, new RegExp(`deployment.apps/web-${suffix} created`));
    }
    const r = await s.kubectl(['apply', '-f', '-'], { input: hostNetworkDeployment });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.trim(), 'Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
    // Warned, not refused: the Deployment is there.
    await s.k(['-n', 'warned', 'get', 'deployment', 'agent']);
  });

  it('warns about existing pods when a namespace gets a stricter enforce level', async () => {
    await s.k(['create', '-f', '-'], { input: privilegedPod('root-1', 'apps') });
    await s.k(['create', '-f', '-'], { input: privilegedPod('root-2', 'apps') });
    await s.k(['create', '-f', '-'], { input: hardenedPod('fine', 'apps') });
    const r = await s.kubectl(['label', 'namespace', 'apps', 'pod-security.kubernetes.io/enforce=baseline']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr.trim(),
      ['Warning: existing pods in namespace "apps" violate the new PodSecurity enforce level "baseline:latest"', 'Warning: root-1 (and 1 other pod): privileged'].join('\n'),
    );
    assert.match(r.stdout, /namespace\/apps labeled/);
    // The label took effect: a new privileged pod is refused.
    const refused = await s.kubectl(['create', '-f', '-'], { input: privilegedPod('root-3', 'apps') });
    assert.match(refused.stderr, /pods "root-3" is forbidden: violates PodSecurity "baseline:latest": privileged \(container "app" must not set securityContext.privileged=true\)/);
  });

  it('refuses an invalid level on a namespace', async () => {
    const r = await s.kubectl(['label', 'namespace', 'apps', 'pod-security.kubernetes.io/warn=loud']);
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      'The Namespace "apps" is invalid: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "loud": must be one of privileged, baseline, restricted',
    );
  });

  it('leaves a namespace exempted by --admission-control-config-file unchecked, and says so when it is labelled', async () => {
    const r = await s.kubectl(['label', 'namespace', 'exempt', 'pod-security.kubernetes.io/enforce=restricted']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr.trim(), 'Warning: namespace "exempt" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored');
    const ok = await s.kubectl(['create', '-f', '-'], { input: privilegedPod('root', 'exempt') });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stderr, '');
  });

  it('refuses through @kubernetes/client-node with a 403 Status', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await assert.rejects(
      core.createNamespacedPod({ namespace: 'locked', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'p', image: 'nginx' }] } } }),
      (e: unknown) => {
        assert.ok(e instanceof k8s.ApiException, String(e));
        assert.equal(e.code, 403);
        const status = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as { reason: string; message: string; details: { name: string; kind: string } };
        assert.equal(status.reason, 'Forbidden');
        assert.equal(status.message, `pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`);
        assert.deepEqual({ name: status.details.name, kind: status.details.kind }, { name: 'p', kind: 'pods' });
        return true;
      },
    );
    const created = await core.createNamespacedPod({
      namespace: 'locked',
      body: {
        metadata: { name: 'cn-hardened' },
        spec: {
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{ name: 'app', image: 'nginx', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
        },
      },
    });
    assert.equal(created.metadata?.name, 'cn-hardened');
  });
});
