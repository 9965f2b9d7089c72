import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../src/api/errors.js';
import type { KubeObject } from '../../src/api/types.js';
import { decodeProtobufObject, PROTOBUF_MAGIC } from '../../src/apiserver/protobuf/decode.js';
import { protobufSchema } from '../../src/api/schema/root.js';

// Bodies captured from the real kubectl 1.32.4 (POST, Content-Type application/vnd.kubernetes.protobuf)
// against a throwaway server, paired with the JSON kubectl 1.31.9 sent for the same command.
// The decoder must produce what the JSON client sent, minus the nulls and empty objects
// ("creationTimestamp": null, "strategy": {}, "status": {}) Go's encoder adds.
const CAPTURED: ReadonlyArray<{ command: string; protobuf: string; json: string }> = [
  {
    command: 'kubectl create deployment web --image=nginx --replicas=0',
    protobuf:
      'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50ErIBCiYKA3dlYhIAGgdkZWZhdWx0IgAqADIAOABCAFoKCgNhcHASA3dlYhJ6CAASDAoKCgNhcHASA3dlYhpgChwKABIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViEkASIgoFbmdpbngSBW5naW54KgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=',
    json: '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"default","creationTimestamp":null,"labels":{"app":"web"}},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}]}},"strategy":{}},"status":{}}',
  },
  {
    command: 'kubectl create deployment web --image=nginx:1.27 --replicas=2',
    protobuf:
      'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50ErcBCiYKA3dlYhIAGgdkZWZhdWx0IgAqADIAOABCAFoKCgNhcHASA3dlYhJ/CAISDAoKCgNhcHASA3dlYhplChwKABIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViEkUSJwoFbmdpbngSCm5naW54OjEuMjcqAEIAagByAIABAIgBAJABAKIBABoAMgBCAEoAUgBYAGAAaACCAQCKAQCaAQDCAQAiAgoAKAA4ABoMCAAQABgAIAAoADgAGgAiAA==',
    json: '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"default","creationTimestamp":null,"labels":{"app":"web"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.27","resources":{}}]}},"strategy":{}},"status":{}}',
  },
  {
    command: 'kubectl create deployment web2 --image=nginx --port=8080',
    protobuf:
      'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50EsQBCigKBHdlYjISABoHZGVmYXVsdCIAKgAyADgAQgBaCwoDYXBwEgR3ZWIyEokBCAESDQoLCgNhcHASBHdlYjIabgodCgASABoAIgAqADIAOABCAFoLCgNhcHASBHdlYjISTRIvCgVuZ2lueBIFbmdpbngqADILCgAQABiQPyIAKgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=',
    json: '{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web2","namespace":"default","creationTimestamp":null,"labels":{"app":"web2"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web2"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web2"}},"spec":{"containers":[{"name":"nginx","image":"nginx","ports":[{"containerPort":8080}],"resources":{}}]}},"strategy":{}},"status":{}}',
  },
  {
    command: 'kubectl create namespace foo',
    protobuf: 'azhzAAoPCgJ2MRIJTmFtZXNwYWNlEhsKEwoDZm9vEgAaACIAKgAyADgAQgASABoCCgAaACIA',
    json: '{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"foo","creationTimestamp":null},"spec":{},"status":{}}',
  },
  {
    command: 'kubectl create configmap cm --from-literal=a=b --from-literal=empty=',
    protobuf: 'azhzAAoPCgJ2MRIJQ29uZmlnTWFwEi4KGQoCY20SABoHZGVmYXVsdCIAKgAyADgAQgASBgoBYRIBYhIJCgVlbXB0eRIAGgAiAA==',
    json: '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"default","creationTimestamp":null},"data":{"a":"b","empty":""}}',
  },
  {
    command: 'kubectl create secret generic s --from-literal=k=v',
    protobuf: 'azhzAAoMCgJ2MRIGU2VjcmV0EiQKGAoBcxIAGgdkZWZhdWx0IgAqADIAOABCABIGCgFrEgF2GgAaACIA',
    json: '{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"default","creationTimestamp":null},"data":{"k":"dg=="}}',
  },
  {
    command: 'kubectl create service clusterip svc --tcp=80:8080',
    protobuf:
      'azhzAAoNCgJ2MRIHU2VydmljZRJwCiYKA3N2YxIAGgdkZWZhdWx0IgAqADIAOABCAFoKCgNhcHASA3N2YxJCChsKBzgwLTgwODASA1RDUBhQIgcIABCQPxoAKAASCgoDYXBwEgNzdmMaACIJQ2x1c3RlcklQOgBCAFIAWgBgAGgAGgIKABoAIgA=',
    json: '{"kind":"Service","apiVersion":"v1","metadata":{"name":"svc","namespace":"default","creationTimestamp":null,"labels":{"app":"svc"}},"spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}],"selector":{"app":"svc"},"type":"ClusterIP"},"status":{"loadBalancer":{}}}',
  },
  {
    command: 'kubectl create poddisruptionbudget pdb --selector=app=web --min-available=0',
    protobuf:
      'azhzAAogCglwb2xpY3kvdjESE1BvZERpc3J1cHRpb25CdWRnZXQSQAoaCgNwZGISABoHZGVmYXVsdCIAKgAyADgAQgASFgoGCAAQABoAEgwKCgoDYXBwEgN3ZWIaCggAGAAgACgAMAAaACIA',
    json: '{"kind":"PodDisruptionBudget","apiVersion":"policy/v1","metadata":{"name":"pdb","namespace":"default","creationTimestamp":null},"spec":{"minAvailable":0,"selector":{"matchLabels":{"app":"web"}}},"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}}',
  },
];

/** Drops what Go's JSON encoder adds for zero non-pointer structs: nulls and empty objects. */
function withoutEmpties(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmpties);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    const cleaned = withoutEmpties(entry);
    if (cleaned === null) continue;
    if (typeof cleaned === 'object' && !Array.isArray(cleaned) && Object.keys(cleaned).length === 0) continue;
    out[key] = cleaned;
  }
  return out;
}

function encode(typeName: string, value: Record<string, unknown>): Uint8Array {
  return protobufSchema().lookupType(typeName).encode(value).finish();
}

/** A body as a typed client sends it: magic, then runtime.Unknown around the raw message. */
function body(apiVersion: string, kind: string, raw: Uint8Array, extra: Record<string, unknown> = {}): Uint8Array {
  const unknown = encode('k8s.io.apimachinery.pkg.runtime.Unknown', {
    typeMeta: { apiVersion, kind },
    raw,
    contentEncoding: '',
    contentType: '',
    ...extra,
  });
  const out = new Uint8Array(PROTOBUF_MAGIC.length + unknown.length);
  out.set(PROTOBUF_MAGIC, 0);
  out.set(unknown, PROTOBUF_MAGIC.length);
  return out;
}

function objectBody(apiVersion: string, pkg: string, kind: string, value: Record<string, unknown>): Uint8Array {
  return body(apiVersion, kind, encode(`${pkg}.${kind}`, value));
}

/** ObjectMeta the way gogo-protobuf writes it: every non-pointer field, zero or not. */
function gogoMeta(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    name: '', generateName: '', namespace: '', selfLink: '', uid: '', resourceVersion: '',
    generation: 0, creationTimestamp: {}, labels: {}, annotations: {}, ...fields,
  };
}

function assertBadRequest(fn: () => unknown, messagePart: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof StatusError, `expected a StatusError, got ${String(err)}`);
    assert.equal(err.code, 400);
    assert.equal(err.status.reason, 'BadRequest');
    assert.match(err.message, messagePart);
    return true;
  });
}

describe('decodeProtobufObject: bodies captured from kubectl 1.32', () => {
  for (const capture of CAPTURED) {
    it(`decodes "${capture.command}" to what kubectl 1.31 sent as JSON`, () => {
      const decoded = decodeProtobufObject(Buffer.from(capture.protobuf, 'base64'));
      assert.deepEqual(decoded, withoutEmpties(JSON.parse(capture.json)));
    });
  }

  it('keeps spec.replicas: 0 of the captured --replicas=0 deployment', () => {
    const decoded = decodeProtobufObject(Buffer.from(CAPTURED[0]!.protobuf, 'base64'));
    assert.deepEqual((decoded['spec'] as Record<string, unknown>)['replicas'], 0);
    assert.equal(decoded.apiVersion, 'apps/v1');
    assert.equal(decoded.kind, 'Deployment');
  });
});

describe('decodeProtobufObject: zero-value normalisation', () => {
  it('drops the gogo zero noise of kubectl create deployment (reference §3.3)', () => {
    const raw = {
      metadata: gogoMeta({ name: 'web', labels: { app: 'web' } }),
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: gogoMeta({ labels: { app: 'web' } }),
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.27', resources: { limits: {}, requests: {} }, stdin: false, stdinOnce: false, tty: false },
            ],
            nodeSelector: {}, hostNetwork: false, hostPID: false, hostIPC: false, overhead: {},
          },
        },
        strategy: {}, minReadySeconds: 0, paused: false,
      },
      status: { observedGeneration: 0, replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0, unavailableReplicas: 0 },
    };
    const decoded = decodeProtobufObject(objectBody('apps/v1', 'k8s.io.api.apps.v1', 'Deployment', raw));
    assert.deepEqual(decoded, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
      },
    });
  });

  it('keeps pointer fields set to zero and omits them when absent', () => {
    const zero = decodeProtobufObject(objectBody('apps/v1', 'k8s.io.api.apps.v1', 'Deployment', {
      metadata: gogoMeta({ name: 'idle' }),
      spec: { replicas: 0, revisionHistoryLimit: 0, progressDeadlineSeconds: 0, paused: false, minReadySeconds: 0 },
    }));
    assert.deepEqual(zero.spec, { replicas: 0, revisionHistoryLimit: 0, progressDeadlineSeconds: 0 });

    const unset = decodeProtobufObject(objectBody('apps/v1', 'k8s.io.api.apps.v1', 'Deployment', {
      metadata: gogoMeta({ name: 'defaulted' }),
      spec: { minReadySeconds: 0 },
    }));
    assert.equal(unset.spec, undefined);

    const rs = decodeProtobufObject(objectBody('apps/v1', 'k8s.io.api.apps.v1', 'ReplicaSet', {
      metadata: gogoMeta({ name: 'rs' }),
      spec: { replicas: 0, minReadySeconds: 0 },
      status: { replicas: 0, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0, observedGeneration: 0 },
    }));
    // status.replicas has no omitempty upstream, so Go's JSON prints the zero too.
    assert.deepEqual(rs.spec, { replicas: 0 });
    assert.deepEqual(rs.status, { replicas: 0 });
  });

  it('converts IntOrString: strings when type is 1, numbers otherwise, pointer zero kept', () => {
    const decoded = decodeProtobufObject(objectBody('apps/v1', 'k8s.io.api.apps.v1', 'Deployment', {
      metadata: gogoMeta({ name: 'web' }),
      spec: {
        replicas: 3,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: { type: 1, intVal: 0, strVal: '25%' }, maxUnavailable: { type: 0, intVal: 1, strVal: '' } } },
      },
    }));
    assert.deepEqual(decoded.spec, { replicas: 3, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } });

    const ds = decodeProtobufObject(objectBody('apps/v1', 'k8s.io.api.apps.v1', 'DaemonSet', {
      metadata: gogoMeta({ name: 'agent' }),
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: { type: 0, intVal: 0, strVal: '' }, maxSurge: { type: 1, strVal: '10%' } } },
      },
      status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: 0 },
    }));
    assert.deepEqual(ds.spec, {
      selector: { matchLabels: { app: 'agent' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '10%' } },
    });
    assert.deepEqual(ds.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  });
});

describe('decodeProtobufObject: kinds', () => {
  it('decodes a Namespace', () => {
    const decoded = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Namespace', {
      metadata: gogoMeta({ name: 'team-a', labels: { owner: 'a', empty: '' }, annotations: { note: 'x' } }),
      spec: { finalizers: ['kubernetes'] },
      status: { phase: '' },
    }));
    assert.deepEqual(decoded, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', labels: { owner: 'a', empty: '' }, annotations: { note: 'x' } },
      spec: { finalizers: ['kubernetes'] },
    });
  });

  it('decodes a ConfigMap with data and binaryData (bytes become base64)', () => {
    const decoded = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'ConfigMap', {
      metadata: gogoMeta({ name: 'cfg', namespace: 'default' }),
      data: { 'app.conf': 'port=8080\n', blank: '' },
      binaryData: { 'logo.bin': Uint8Array.of(0x00, 0xff, 0x10, 0x80), none: new Uint8Array(0) },
      immutable: false,
    }));
    assert.deepEqual(decoded, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', namespace: 'default' },
      data: { 'app.conf': 'port=8080\n', blank: '' },
      binaryData: { 'logo.bin': 'AP8QgA==', none: '' },
      immutable: false,
    });
  });

  it('decodes a Secret', () => {
    const decoded = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Secret', {
      metadata: gogoMeta({ name: 'db', namespace: 'prod' }),
      data: { password: Buffer.from('s3cr3t'), 'tls.key': Buffer.from([1, 2, 3]) },
      stringData: { user: 'admin' },
      type: 'Opaque',
    }));
    assert.deepEqual(decoded, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'prod' },
      data: { password: 'czNjcjN0', 'tls.key': 'AQID' },
      stringData: { user: 'admin' },
      type: 'Opaque',
    });
  });

  it('decodes a Pod with probes, env, quantities, volumes, tolerations and affinity', () => {
    const noise = { stdin: false, stdinOnce: false, tty: false, workingDir: '', terminationMessagePath: '', imagePullPolicy: '' };
    const raw = {
      metadata: gogoMeta({
        name: 'web-0',
        namespace: 'prod',
        generation: 3,
        creationTimestamp: { seconds: 1700000000, nanos: 5 },
        deletionTimestamp: { seconds: 1735689600 },
        deletionGracePeriodSeconds: 0,
        labels: { app: 'web', canary: '' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'u-1', controller: true, blockOwnerDeletion: false }],
        finalizers: ['example.com/guard'],
        managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: { seconds: 1700000000 }, fieldsType: 'FieldsV1', fieldsV1: { Raw: Buffer.from('{"f:metadata":{"f:labels":{}}}') }, subresource: '' }],
      }),
      spec: {
        volumes: [
          { name: 'scratch', volumeSource: { emptyDir: {} } },
          { name: 'mem', volumeSource: { emptyDir: { medium: 'Memory', sizeLimit: { string: '64Mi' } } } },
          { name: 'cfg', volumeSource: { configMap: { localObjectReference: { name: 'web-config' }, items: [{ key: 'a', path: 'a.txt', mode: 256 }], defaultMode: 420, optional: false } } },
          { name: 'creds', volumeSource: { secret: { secretName: 'db', defaultMode: 0 } } },
          { name: 'logs', volumeSource: { hostPath: { path: '/var/log', type: '' } } },
          { name: 'data', volumeSource: { persistentVolumeClaim: { claimName: 'data', readOnly: false } } },
          {
            name: 'proj',
            volumeSource: {
              projected: {
                sources: [
                  { serviceAccountToken: { audience: '', expirationSeconds: 3607, path: 'token' } },
                  { downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }] } },
                  { secret: { localObjectReference: { name: 'ca' }, items: [] } },
                ],
                defaultMode: 420,
              },
            },
          },
          { name: 'info', volumeSource: { downwardAPI: { items: [{ path: 'cpu', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: { string: '1m' } } }] } } },
        ],
        initContainers: [{ name: 'init', image: 'busybox', command: ['sh', '-c', 'true'], resources: { limits: {}, requests: {} }, ...noise, restartPolicy: 'Always' }],
        containers: [
          {
            name: 'app',
            image: 'nginx:1.27',
            args: ['--port', '8080'],
            ports: [{ name: 'http', hostPort: 0, containerPort: 8080, protocol: 'TCP', hostIP: '' }],
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'EMPTY', value: '' },
              { name: 'POD_IP', value: '', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
              { name: 'MEM_MB', value: '', valueFrom: { resourceFieldRef: { containerName: '', resource: 'limits.memory', divisor: { string: '1Mi' } } } },
              { name: 'PW', value: '', valueFrom: { secretKeyRef: { localObjectReference: { name: 'db' }, key: 'password', optional: true } } },
              { name: 'LEVEL', value: '', valueFrom: { configMapKeyRef: { localObjectReference: { name: 'web-config' }, key: 'level' } } },
            ],
            envFrom: [{ prefix: 'CFG_', configMapRef: { localObjectReference: { name: 'web-config' } } }, { prefix: '', secretRef: { localObjectReference: { name: 'db' }, optional: false } }],
            resources: { limits: { cpu: { string: '500m' }, memory: { string: '256Mi' } }, requests: { cpu: { string: '100m' }, memory: { string: '0' } } },
            volumeMounts: [{ name: 'cfg', readOnly: true, mountPath: '/etc/web', subPath: '', subPathExpr: '' }, { name: 'data', readOnly: false, mountPath: '/data', subPath: 'web', mountPropagation: 'None' }],
            livenessProbe: {
              handler: { httpGet: { path: '/healthz', port: { type: 1, intVal: 0, strVal: 'http' }, host: '', scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] } },
              initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3,
            },
            readinessProbe: {
              handler: { tcpSocket: { port: { type: 0, intVal: 8080, strVal: '' }, host: '' } },
              initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3,
            },
            startupProbe: { handler: { exec: { command: ['cat', '/tmp/ready'] } }, periodSeconds: 10, failureThreshold: 30, terminationGracePeriodSeconds: 0 },
            lifecycle: { postStart: { exec: { command: ['echo', 'hi'] } }, preStop: { sleep: { seconds: 5 } } },
            securityContext: { runAsUser: 0, runAsNonRoot: false, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { add: [], drop: ['ALL'] } },
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            imagePullPolicy: 'IfNotPresent',
            stdin: false, stdinOnce: false, tty: false, workingDir: '',
          },
          { name: 'sidecar', image: 'envoy', livenessProbe: { handler: { grpc: { port: 9901, service: '' } }, periodSeconds: 0 }, resources: { limits: {}, requests: {} }, ...noise },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        activeDeadlineSeconds: 600,
        dnsPolicy: 'ClusterFirst',
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        serviceAccountName: 'web',
        serviceAccount: '',
        nodeName: '',
        hostNetwork: false, hostPID: false, hostIPC: false,
        automountServiceAccountToken: false,
        securityContext: { runAsGroup: 0, fsGroup: 2000, supplementalGroups: [1000, 2000], seccompProfile: { type: 'RuntimeDefault' }, sysctls: [] },
        imagePullSecrets: [{ name: 'regcred' }],
        hostname: '', subdomain: '',
        schedulerName: 'default-scheduler',
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }], matchFields: [] }] },
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists', values: [] }] } }],
          },
          podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { labelSelector: {}, topologyKey: 'zone' } }] },
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, namespaces: [], topologyKey: 'kubernetes.io/hostname' }],
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, topologyKey: 'zone' } }],
          },
        },
        tolerations: [
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', value: '', effect: 'NoExecute', tolerationSeconds: 300 },
          { key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' },
          { key: '', operator: 'Exists', value: '', effect: '', tolerationSeconds: 0 },
        ],
        hostAliases: [{ ip: '10.0.0.1', hostnames: ['db.local'] }],
        priorityClassName: 'high',
        priority: 0,
        dnsConfig: { nameservers: ['1.1.1.1'], searches: [], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
        readinessGates: [{ conditionType: 'example.com/ready' }],
        enableServiceLinks: false,
        preemptionPolicy: 'PreemptLowerPriority',
        overhead: {},
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, minDomains: 2, matchLabelKeys: ['pod-template-hash'] }],
        os: { name: 'linux' },
      },
      status: { phase: '', conditions: [], message: '', reason: '', hostIP: '', podIP: '', qosClass: '' },
    };
    const decoded = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Pod', raw));
    const expected: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-0',
        namespace: 'prod',
        generation: 3,
        creationTimestamp: '2023-11-14T22:13:20Z',
        deletionTimestamp: '2025-01-01T00:00:00Z',
        deletionGracePeriodSeconds: 0,
        labels: { app: 'web', canary: '' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'u-1', controller: true, blockOwnerDeletion: false }],
        finalizers: ['example.com/guard'],
        managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '2023-11-14T22:13:20Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }],
      },
      spec: {
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          { name: 'cfg', configMap: { name: 'web-config', items: [{ key: 'a', path: 'a.txt', mode: 256 }], defaultMode: 420, optional: false } },
          { name: 'creds', secret: { secretName: 'db', defaultMode: 0 } },
          { name: 'logs', hostPath: { path: '/var/log', type: '' } },
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          {
            name: 'proj',
            projected: {
              sources: [
                { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
                { downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }] } },
                { secret: { name: 'ca' } },
              ],
              defaultMode: 420,
            },
          },
          { name: 'info', downwardAPI: { items: [{ path: 'cpu', resourceFieldRef: { containerName: 'app', resource: 'limits.cpu', divisor: '1m' } }] } },
        ],
        containers: [
          {
            name: 'app',
            image: 'nginx:1.27',
            args: ['--port', '8080'],
            ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'EMPTY' },
              { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
              { name: 'MEM_MB', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
              { name: 'PW', valueFrom: { secretKeyRef: { name: 'db', key: 'password', optional: true } } },
              { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'web-config', key: 'level' } } },
            ],
            resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '0' } },
            volumeMounts: [{ name: 'cfg', readOnly: true, mountPath: '/etc/web' }, { name: 'data', mountPath: '/data', subPath: 'web', mountPropagation: 'None' }],
            livenessProbe: {
              httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] },
              initialDelaySeconds: 5, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3,
            },
            readinessProbe: { tcpSocket: { port: 8080 }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
            startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 10, failureThreshold: 30, terminationGracePeriodSeconds: 0 },
            lifecycle: { postStart: { exec: { command: ['echo', 'hi'] } }, preStop: { sleep: { seconds: 5 } } },
            terminationMessagePath: '/dev/termination-log',
            imagePullPolicy: 'IfNotPresent',
            securityContext: { capabilities: { drop: ['ALL'] }, runAsUser: 0, runAsNonRoot: false, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'web-config' } }, { secretRef: { name: 'db', optional: false } }],
            terminationMessagePolicy: 'File',
          },
          { name: 'sidecar', image: 'envoy', livenessProbe: { grpc: { port: 9901, service: '' } } },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        activeDeadlineSeconds: 600,
        dnsPolicy: 'ClusterFirst',
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        serviceAccountName: 'web',
        securityContext: { runAsGroup: 0, fsGroup: 2000, supplementalGroups: [1000, 2000], seccompProfile: { type: 'RuntimeDefault' } },
        imagePullSecrets: [{ name: 'regcred' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] },
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } }],
          },
          podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { labelSelector: {}, topologyKey: 'zone' } }] },
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' }],
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { labelSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, topologyKey: 'zone' } }],
          },
        },
        schedulerName: 'default-scheduler',
        initContainers: [{ name: 'init', image: 'busybox', command: ['sh', '-c', 'true'], restartPolicy: 'Always' }],
        automountServiceAccountToken: false,
        tolerations: [
          { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          { key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' },
          { operator: 'Exists', tolerationSeconds: 0 },
        ],
        hostAliases: [{ ip: '10.0.0.1', hostnames: ['db.local'] }],
        priorityClassName: 'high',
        priority: 0,
        dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
        readinessGates: [{ conditionType: 'example.com/ready' }],
        enableServiceLinks: false,
        preemptionPolicy: 'PreemptLowerPriority',
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, minDomains: 2, matchLabelKeys: ['pod-template-hash'] }],
        os: { name: 'linux' },
      },
    };
    assert.deepEqual(decoded, expected);
  });

  it('decodes a Service with a named targetPort and session affinity', () => {
    const decoded = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Service', {
      metadata: gogoMeta({ name: 'web' }),
      spec: {
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: { type: 1, strVal: 'http' }, nodePort: 0 }],
        selector: { app: 'web' },
        clusterIP: 'None', type: 'ClusterIP', sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
        publishNotReadyAddresses: false, healthCheckNodePort: 0,
        ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'], internalTrafficPolicy: 'Cluster',
      },
      status: { loadBalancer: {} },
    }));
    assert.deepEqual(decoded.spec, {
      ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' }],
      selector: { app: 'web' },
      clusterIP: 'None', type: 'ClusterIP', sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
      ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'], internalTrafficPolicy: 'Cluster',
    });
    assert.equal(decoded.status, undefined);
  });

  it('decodes Node, Event, Endpoints, Lease, Scale, Eviction and DeleteOptions', () => {
    const node = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Node', {
      metadata: gogoMeta({ name: 'n1' }),
      spec: { unschedulable: true, taints: [{ key: 'maint', value: '', effect: 'NoSchedule', timeAdded: { seconds: 1700000000 } }], podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24'] },
      status: {
        capacity: { cpu: { string: '4' }, memory: { string: '8Gi' }, pods: { string: '110' } },
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: { seconds: 1700000000 }, lastTransitionTime: {}, reason: 'KubeletReady', message: '' }],
        addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: { kubeletVersion: 'v1.32.0', architecture: 'amd64', operatingSystem: 'linux', machineID: '' },
      },
    }));
    assert.deepEqual(node.spec, { podCIDR: '10.244.0.0/24', unschedulable: true, taints: [{ key: 'maint', effect: 'NoSchedule', timeAdded: '2023-11-14T22:13:20Z' }], podCIDRs: ['10.244.0.0/24'] });
    assert.deepEqual(node.status, {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2023-11-14T22:13:20Z', reason: 'KubeletReady' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { kubeletVersion: 'v1.32.0', operatingSystem: 'linux', architecture: 'amd64' },
    });

    const event = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Event', {
      metadata: gogoMeta({ name: 'web.1', namespace: 'prod' }),
      involvedObject: { kind: 'Pod', namespace: 'prod', name: 'web', uid: '', apiVersion: 'v1', resourceVersion: '', fieldPath: '' },
      reason: 'Scheduled', message: 'assigned', source: { component: 'scheduler', host: '' },
      firstTimestamp: {}, lastTimestamp: {}, count: 0, type: 'Normal',
      eventTime: { seconds: 1700000000, nanos: 123456789 },
      action: 'Binding', reportingComponent: 'scheduler', reportingInstance: 'sched-1',
    }));
    assert.deepEqual(event, {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: 'web.1', namespace: 'prod' },
      involvedObject: { kind: 'Pod', namespace: 'prod', name: 'web', apiVersion: 'v1' },
      reason: 'Scheduled', message: 'assigned', source: { component: 'scheduler' }, type: 'Normal',
      eventTime: '2023-11-14T22:13:20.123456Z',
      action: 'Binding', reportingComponent: 'scheduler', reportingInstance: 'sched-1',
    });

    const endpoints = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Endpoints', {
      metadata: gogoMeta({ name: 'web' }),
      subsets: [{ addresses: [{ ip: '10.1.0.4', hostname: '', nodeName: 'n1', targetRef: { kind: 'Pod', name: 'web-0', namespace: 'prod' } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
    }));
    assert.deepEqual(endpoints['subsets'], [{ addresses: [{ ip: '10.1.0.4', targetRef: { kind: 'Pod', namespace: 'prod', name: 'web-0' }, nodeName: 'n1' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }]);

    const lease = decodeProtobufObject(objectBody('coordination.k8s.io/v1', 'k8s.io.api.coordination.v1', 'Lease', {
      metadata: gogoMeta({ name: 'n1', namespace: 'kube-node-lease' }),
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: { seconds: 1700000000, nanos: 5000 }, leaseTransitions: 0 },
    }));
    assert.deepEqual(lease.spec, { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2023-11-14T22:13:20.000005Z', leaseTransitions: 0 });

    const scale = decodeProtobufObject(objectBody('autoscaling/v1', 'k8s.io.api.autoscaling.v1', 'Scale', {
      metadata: gogoMeta({ name: 'web', namespace: 'prod', resourceVersion: '42' }),
      spec: { replicas: 0 },
      status: { replicas: 3, selector: 'app=web' },
    }));
    assert.deepEqual(scale, {
      apiVersion: 'autoscaling/v1', kind: 'Scale',
      metadata: { name: 'web', namespace: 'prod', resourceVersion: '42' },
      spec: { replicas: 0 },
      status: { replicas: 3, selector: 'app=web' },
    });

    const eviction = decodeProtobufObject(objectBody('policy/v1', 'k8s.io.api.policy.v1', 'Eviction', {
      metadata: gogoMeta({ name: 'web-0', namespace: 'prod' }),
      deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'u-1' }, dryRun: [] },
    }));
    assert.deepEqual(eviction, {
      apiVersion: 'policy/v1', kind: 'Eviction',
      metadata: { name: 'web-0', namespace: 'prod' },
      deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'u-1' } },
    });

    const deleteOptions = decodeProtobufObject(body('v1', 'DeleteOptions', encode('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions', {
      propagationPolicy: 'Foreground', orphanDependents: false, dryRun: ['All'],
    })));
    assert.deepEqual(deleteOptions, {
      apiVersion: 'v1', kind: 'DeleteOptions', metadata: {},
      orphanDependents: false, propagationPolicy: 'Foreground', dryRun: ['All'],
    });
  });

  it('converts int64 fields to numbers', () => {
    const decoded = decodeProtobufObject(objectBody('v1', 'k8s.io.api.core.v1', 'Pod', {
      metadata: gogoMeta({ name: 'p', generation: 9007199254740991 }),
      spec: { containers: [{ name: 'c', image: 'i' }], activeDeadlineSeconds: 86400, securityContext: { runAsUser: 65534, supplementalGroups: [0, 4294967296] } },
    }));
    assert.equal(decoded.metadata.generation, 9007199254740991);
    const spec = decoded['spec'] as Record<string, unknown>;
    assert.equal(spec['activeDeadlineSeconds'], 86400);
    assert.deepEqual(spec['securityContext'], { runAsUser: 65534, supplementalGroups: [0, 4294967296] });
  });
});

describe('decodeProtobufObject: malformed input is a 400, never a crash', () => {
  const deployment = Buffer.from(CAPTURED[0]!.protobuf, 'base64');

  it('rejects another magic, a JSON body and too-short bodies', () => {
    const wrongMagic = Uint8Array.from(deployment);
    wrongMagic[3] = 0x01;
    assertBadRequest(() => decodeProtobufObject(wrongMagic), /magic/);
    assertBadRequest(() => decodeProtobufObject(Buffer.from('{"kind":"Pod","apiVersion":"v1"}')), /magic/);
    assertBadRequest(() => decodeProtobufObject(Uint8Array.of(0x6b, 0x38)), /magic/);
    assertBadRequest(() => decodeProtobufObject(new Uint8Array(0)), /magic/);
  });

  it('rejects a truncated body', () => {
    assertBadRequest(() => decodeProtobufObject(deployment.subarray(0, deployment.length - 10)), /malformed|unable to decode/);
  });

  it('rejects unknown or unsupported kinds', () => {
    assertBadRequest(() => decodeProtobufObject(body('v1', 'Frobnicator', new Uint8Array(0))), /Frobnicator.*not supported/);
    assertBadRequest(() => decodeProtobufObject(body('node.k8s.io/v1', 'RuntimeClass', new Uint8Array(0))), /RuntimeClass.*node.k8s.io\/v1.*not supported/);
    assertBadRequest(() => decodeProtobufObject(body('apps/v1', 'Pod', new Uint8Array(0))), /Pod.*not supported/);
    assertBadRequest(() => decodeProtobufObject(body('v1', 'ObjectMeta', new Uint8Array(0))), /not supported/);
    assertBadRequest(() => decodeProtobufObject(body('v1', '', new Uint8Array(0))), /kind/);
  });

  it('rejects encodings it cannot read', () => {
    assertBadRequest(() => decodeProtobufObject(body('v1', 'Namespace', new Uint8Array(0), { contentEncoding: 'gzip' })), /gzip/);
    assertBadRequest(() => decodeProtobufObject(body('v1', 'Namespace', new Uint8Array(0), { contentType: 'application/yaml' })), /application\/yaml/);
  });

  it('rejects garbage inside raw', () => {
    assertBadRequest(() => decodeProtobufObject(body('v1', 'Pod', Uint8Array.of(0x0a, 0xff, 0xff, 0xff, 0x0f))), /unable to decode the protobuf Pod/);
    assertBadRequest(() => decodeProtobufObject(body('v1', 'Pod', Uint8Array.of(0x12, 0x05, 0x01))), /unable to decode the protobuf Pod/);
  });

  it('survives every truncation and random bytes: either decodes or throws a 400', () => {
    const tryDecode = (input: Uint8Array): void => {
      try {
        decodeProtobufObject(input);
      } catch (err) {
        assert.ok(err instanceof StatusError && err.code === 400, `unexpected ${String(err)}`);
      }
    };
    for (let cut = 0; cut <= deployment.length; cut++) tryDecode(deployment.subarray(0, cut));
    let seed = 42;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % 256;
    for (let round = 0; round < 300; round++) {
      const noise = Uint8Array.from({ length: 1 + (round % 64) }, next);
      tryDecode(Uint8Array.from([...PROTOBUF_MAGIC, ...noise]));
      tryDecode(body('v1', 'Pod', noise));
      const flipped = Uint8Array.from(deployment);
      flipped[4 + (next() % (flipped.length - 4))] ^= 1 << next() % 8;
      tryDecode(flipped);
    }
  });
});
