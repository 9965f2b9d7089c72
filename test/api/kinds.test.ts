import { servedKinds } from '../../src/apiextensions/served-kinds.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, StatusCause } from '../../src/api/types.js';
import { resourceTypeFor, resourceTypeForKind } from '../../src/api/registry.js';
import { podResource, podQOSClass } from '../../src/api/kinds/pod.js';
import { deploymentResource } from '../../src/api/kinds/deployment.js';
import { replicaSetResource } from '../../src/api/kinds/replicaset.js';
import { daemonSetResource } from '../../src/api/kinds/daemonset.js';
import { namespaceResource } from '../../src/api/kinds/namespace.js';
import { serviceResource } from '../../src/api/kinds/service.js';
import { secretResource } from '../../src/api/kinds/secret.js';
import { nodeResource } from '../../src/api/kinds/node.js';
import { podDisruptionBudgetResource } from '../../src/api/kinds/poddisruptionbudget.js';
import { leaseResource } from '../../src/api/kinds/lease.js';
import { configMapResource } from '../../src/api/kinds/configmap.js';

function lines(causes: StatusCause[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

function created(rt: typeof podResource, o: KubeObject): KubeObject {
  rt.defaults(o);
  rt.prepareForCreate?.(o);
  return o;
}

test('registry lookups', () => {
  assert.equal(resourceTypeFor('', 'v1', 'pods'), podResource);
  assert.equal(resourceTypeFor('apps', 'v1', 'deployments'), deploymentResource);
  assert.equal(resourceTypeForKind('policy', 'v1', 'PodDisruptionBudget'), podDisruptionBudgetResource);
  assert.equal(resourceTypeFor('apps', 'v1', 'pods'), undefined);
  assert.equal(servedKinds.length, 46);
  const shorts = servedKinds.flatMap((rt) => rt.shortNames).sort();
  assert.deepEqual(shorts, ['cj', 'cm', 'crd', 'crds', 'csr', 'deploy', 'ds', 'ep', 'ev', 'hpa', 'hpa', 'ing', 'limits', 'netpol', 'no', 'ns', 'pc', 'pdb', 'po', 'pv', 'pvc', 'quota', 'rc', 'rs', 'sa', 'sc', 'sts', 'svc']);
});

test('pod defaults', () => {
  const pod = created(podResource, {
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      containers: [
        { name: 'a', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1', memory: '1Gi' } } },
        { name: 'b', image: 'nginx:1.27' },
        { name: 'c', image: 'repo/app:latest' },
        { name: 'd', image: 'app@sha256:abcd' },
      ],
      volumes: [{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'x' } }],
    },
    status: { phase: 'Running' },
  });
  const spec = pod.spec as Record<string, any>;
  assert.equal(spec.restartPolicy, 'Always');
  assert.equal(spec.dnsPolicy, 'ClusterFirst');
  assert.equal(spec.terminationGracePeriodSeconds, 30);
  assert.equal(spec.schedulerName, 'default-scheduler');
  assert.deepEqual(spec.securityContext, {});
  assert.equal(spec.enableServiceLinks, true);
  assert.deepEqual(
    spec.containers.map((c: Record<string, unknown>) => c.imagePullPolicy),
    ['Always', 'IfNotPresent', 'Always', 'IfNotPresent'],
  );
  assert.equal(spec.containers[0].terminationMessagePath, '/dev/termination-log');
  assert.equal(spec.containers[0].terminationMessagePolicy, 'File');
  assert.equal(spec.containers[0].ports[0].protocol, 'TCP');
  assert.deepEqual(spec.containers[0].resources.requests, { cpu: '1', memory: '1Gi' });
  assert.deepEqual(spec.volumes[0], { name: 'scratch', emptyDir: {} });
  assert.equal(spec.volumes[1].configMap.defaultMode, 420);
  // Status is reset on create: Pending, with the QoS class computed from the defaulted spec.
  assert.deepEqual(pod.status, { phase: 'Pending', qosClass: 'Burstable' });
  assert.deepEqual(lines(podResource.validate(pod, undefined)), []);
});

test('pod QoS classes', () => {
  assert.equal(podQOSClass({ containers: [{ name: 'a' }] }), 'BestEffort');
  assert.equal(podQOSClass({ containers: [{ name: 'a', resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1Gi' } } }] }), 'Guaranteed');
  assert.equal(podQOSClass({ containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }] }), 'Burstable');
});

test('pod validation messages', () => {
  const pod = created(podResource, { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'Web' }, { name: 'x', image: 'i', ports: [{ containerPort: 70000 }] }], restartPolicy: 'Sometimes' } });
  assert.deepEqual(lines(podResource.validate(pod, undefined)), [
    `spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    'spec.containers[0].image: Required value',
    'spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
  ]);
  const empty = created(podResource, { metadata: { name: 'p', namespace: 'd' }, spec: {} });
  assert.deepEqual(lines(podResource.validate(empty, undefined)), ['spec.containers: Required value']);
  const dup = created(podResource, { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i' }, { name: 'a', image: 'i' }] } });
  assert.deepEqual(lines(podResource.validate(dup, undefined)), ['spec.containers[1].name: Duplicate value: "a"']);
});

test('probe validation as upstream: one handler, whole non-negative numbers, successThreshold 1 for liveness', () => {
  const probes = {
    livenessProbe: { exec: { command: ['x'] }, httpGet: { port: 80 }, successThreshold: 2 },
    readinessProbe: { periodSeconds: 'often', terminationGracePeriodSeconds: 5, tcpSocket: { port: 0 } },
    startupProbe: { exec: { command: ['x'] }, failureThreshold: -1 },
  };
  const pod = created(podResource, { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'c', image: 'i', ...probes }] } });
  assert.deepEqual(lines(podResource.validate(pod, undefined)), [
    'spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type',
    'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
    'spec.containers[0].readinessProbe.periodSeconds: Invalid value: "often": must be a whole number',
    'spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes',
    'spec.containers[0].readinessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive',
    'spec.containers[0].startupProbe.failureThreshold: Invalid value: -1: must be greater than or equal to 0',
  ]);
});

test('pod updates: image and tolerations may change, the rest may not', () => {
  const old = created(podResource, { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'nginx:1' }], nodeName: 'n1' } });
  const newImage = structuredClone(old);
  (newImage.spec as any).containers[0].image = 'nginx:2';
  (newImage.spec as any).tolerations = [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }];
  assert.deepEqual(lines(podResource.validate(newImage, old)), []);
  const moved = structuredClone(old);
  (moved.spec as any).nodeName = 'n2';
  const causes = podResource.validate(moved, old);
  assert.equal(causes.length, 1);
  assert.equal(causes[0]!.field, 'spec');
  assert.ok(
    causes[0]!.message!.startsWith(
      'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n',
    ),
  );
  assert.match(causes[0]!.message!, /NodeName: "n2"/);
  const fewer = structuredClone(old);
  (fewer.spec as any).containers = [];
  assert.ok(lines(podResource.validate(fewer, old)).includes('spec.containers: Forbidden: pod updates may not add or remove containers'));
});

test('deployment defaults', () => {
  const d = created(deploymentResource, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
  });
  const spec = d.spec as Record<string, any>;
  assert.equal(spec.replicas, 1);
  assert.deepEqual(spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  assert.equal(spec.revisionHistoryLimit, 10);
  assert.equal(spec.progressDeadlineSeconds, 600);
  assert.equal(spec.template.spec.restartPolicy, 'Always');
  assert.equal(spec.template.spec.containers[0].imagePullPolicy, 'Always');
  assert.equal(spec.template.spec.enableServiceLinks, undefined, 'pod-only defaults stay off templates');
  assert.deepEqual(d.status, {});
  assert.deepEqual(lines(deploymentResource.validate(d, undefined)), []);
});

test('deployment selector must match template labels', () => {
  const d = created(deploymentResource, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { replicas: -1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'other', tier: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  assert.deepEqual(lines(deploymentResource.validate(d, undefined)), [
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other", "tier":"x"}: `selector` does not match template `labels`',
  ]);
  const noSel = created(deploymentResource, { metadata: { name: 'web', namespace: 'default' }, spec: { template: {} } });
  assert.deepEqual(lines(deploymentResource.validate(noSel, undefined)), ['spec.selector: Required value']);
});

test('apps/v1 selectors are immutable', () => {
  const old = created(deploymentResource, {
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web', v: '2' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  const upd = structuredClone(old);
  (upd.spec as any).selector = { matchLabels: { app: 'web', v: '2' } };
  assert.deepEqual(lines(deploymentResource.validate(upd, old)), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  ]);
  const rs = created(replicaSetResource, {
    metadata: { name: 'rs', namespace: 'd' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
  });
  assert.equal((rs.spec as any).replicas, 1);
  assert.deepEqual(rs.status, { replicas: 0 });
  assert.deepEqual(lines(replicaSetResource.validate(rs, undefined)), []);
});

test('daemonset defaults and template generation', () => {
  const ds = created(daemonSetResource, {
    metadata: { name: 'agent', namespace: 'kube-system' },
    spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } } },
  });
  assert.deepEqual((ds.spec as any).updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.equal((ds.spec as any).revisionHistoryLimit, 10);
  assert.equal(ds.metadata.annotations?.['deprecated.daemonset.template.generation'], '1');
  assert.deepEqual(lines(daemonSetResource.validate(ds, undefined)), []);
  const upd = structuredClone(ds);
  (upd.spec as any).template.spec.containers[0].image = 'i:2';
  daemonSetResource.prepareForUpdate!(upd, ds);
  assert.equal(upd.metadata.annotations?.['deprecated.daemonset.template.generation'], '2');
});

test('namespace, service, secret, node defaults', () => {
  const ns = created(namespaceResource, { metadata: { name: 'team-a' } });
  assert.equal(ns.metadata.labels?.['kubernetes.io/metadata.name'], 'team-a');
  assert.deepEqual(ns.status, { phase: 'Active' });
  assert.deepEqual(ns.spec, { finalizers: ['kubernetes'] });
  assert.deepEqual(lines(namespaceResource.validate(ns, undefined)), []);
  assert.equal(lines(namespaceResource.validate({ metadata: { name: 'a.b' } }, undefined))[0], 'metadata.name: Invalid value: "a.b": must not contain dots');

  const svc = created(serviceResource, { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }], clusterIP: '10.96.0.10' } });
  const s = svc.spec as Record<string, any>;
  assert.equal(s.type, 'ClusterIP');
  assert.equal(s.sessionAffinity, 'None');
  assert.deepEqual(s.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
  assert.equal(s.internalTrafficPolicy, 'Cluster');
  assert.equal(s.ipFamilyPolicy, 'SingleStack');
  assert.deepEqual(s.ipFamilies, ['IPv4']);
  assert.deepEqual(s.clusterIPs, ['10.96.0.10']);
  assert.deepEqual(lines(serviceResource.validate(svc, undefined)), []);
  const applied = { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } } as KubeObject;
  serviceResource.defaults(applied);
  serviceResource.prepareForUpdate!(applied, svc);
  assert.deepEqual(lines(serviceResource.validate(applied, svc)), [], 'apply without clusterIP keeps the allocated one');
  const moved = structuredClone(svc);
  (moved.spec as any).clusterIP = '10.96.0.11';
  (moved.spec as any).clusterIPs = ['10.96.0.11'];
  assert.deepEqual(lines(serviceResource.validate(moved, svc)), ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set']);
  assert.equal(lines(serviceResource.validate({ metadata: { name: '1web', namespace: 'd' }, spec: { ports: [{ port: 80, protocol: 'TCP' }], type: 'ClusterIP', sessionAffinity: 'None' } }, undefined))[0],
    `metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`);

  const secret = created(secretResource, { metadata: { name: 's', namespace: 'd' }, stringData: { user: 'admin' } });
  assert.equal(secret.type, 'Opaque');
  assert.deepEqual(secret.data, { user: 'YWRtaW4=' });
  assert.equal(secret.stringData, undefined);
  const tls = { metadata: { name: 's', namespace: 'd' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==' } };
  assert.deepEqual(lines(secretResource.validate(tls, undefined)), ['data[tls.key]: Required value']);
  assert.deepEqual(lines(secretResource.validate({ ...secret, type: 'kubernetes.io/tls' }, secret)).slice(0, 1), ['type: Invalid value: "kubernetes.io/tls": field is immutable']);

  const node = created(nodeResource, { metadata: { name: 'n1' }, status: { capacity: { cpu: '4', pods: '110' } }, spec: { taints: [{ key: 'k', effect: 'Sometimes' }, { key: 'k', effect: 'NoSchedule' }, { key: 'k', effect: 'NoSchedule' }] } });
  assert.deepEqual((node.status as any).allocatable, { cpu: '4', pods: '110' });
  assert.deepEqual(lines(nodeResource.validate(node, undefined)), [
    'spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    'spec.taints[2]: Duplicate value: core.Taint{Key:"k", Value:"", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair',
  ]);
});

test('pdb, lease and configmap validation', () => {
  const pdb = created(podDisruptionBudgetResource, { metadata: { name: 'p', namespace: 'd' }, spec: { minAvailable: '150%', selector: { matchLabels: { a: 'b' } } } });
  assert.deepEqual(pdb.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
  assert.deepEqual(lines(podDisruptionBudgetResource.validate(pdb, undefined)), [
    'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
  ]);
  const both = { metadata: { name: 'p', namespace: 'd' }, spec: { minAvailable: 1, maxUnavailable: 1 } };
  assert.match(lines(podDisruptionBudgetResource.validate(both, undefined))[0]!, /^spec: Invalid value: .*: minAvailable and maxUnavailable cannot be both set$/);
  assert.deepEqual(lines(leaseResource.validate({ metadata: { name: 'l', namespace: 'd' }, spec: { leaseDurationSeconds: 0 } }, undefined)), [
    'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
  ]);
  assert.deepEqual(lines(configMapResource.validate({ metadata: { name: 'c', namespace: 'd' }, data: { 'bad key': 'v' } }, undefined)), [
    `data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
  ]);
  const frozen = { metadata: { name: 'c', namespace: 'd' }, data: { a: '1' }, immutable: true };
  assert.deepEqual(lines(configMapResource.validate({ ...frozen, data: { a: '2' } }, frozen)), ['data: Forbidden: field is immutable when `immutable` is set']);
});
