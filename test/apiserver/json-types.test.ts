import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonTypeError } from '../../src/apiserver/protobuf/json-types.js';

const deployment = (spec: Record<string, unknown>, containers: unknown[] = [{ name: 'c', image: 'x', command: ['sleep', '1'] }]) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', labels: { a: 'b' } },
  spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers } }, ...spec },
});

describe('JSON value types (as Go decodes them)', () => {
  it('accepts well-typed objects, nulls, quantities as strings or numbers, and int-or-string values', () => {
    assert.equal(jsonTypeError(deployment({ replicas: 3, strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } }), 'apps/v1', 'Deployment'), undefined);
    assert.equal(jsonTypeError(deployment({ replicas: null }, [{ name: 'c', image: 'x', resources: { limits: { cpu: 1, memory: '1Gi' } }, ports: [{ containerPort: 80 }] }]), 'apps/v1', 'Deployment'), undefined);
    assert.equal(jsonTypeError({ metadata: { name: 'x', creationTimestamp: null }, data: { a: 'b' } }, 'v1', 'ConfigMap'), undefined);
    assert.equal(jsonTypeError({ metadata: {}, anything: 5 }, 'v1', 'NoSuchKind'), undefined, 'kinds without a schema are not checked');
    assert.equal(jsonTypeError({ metadata: {}, data: { crt: 'aGVs\nbG8=' } }, 'v1', 'Secret'), undefined, 'wrapped base64');
    assert.equal(jsonTypeError({ metadata: {}, data: { crt: 'aGVs!' } }, 'v1', 'Secret'), 'illegal base64 data at input byte 4');
    assert.equal(jsonTypeError({ metadata: {}, spec: { containers: [], securityContext: { runAsUser: 9223372036854775807 } } }, 'v1', 'Pod'), undefined, 'int64 beyond 2^53');
  });

  it('names the first value of the wrong type as Go does: struct, field path without indexes, Go type', () => {
    assert.equal(jsonTypeError(deployment({ replicas: '3' }), 'apps/v1', 'Deployment'), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
    assert.equal(jsonTypeError(deployment({ replicas: 2.5 }), 'apps/v1', 'Deployment'), 'json: cannot unmarshal number 2.5 into Go struct field DeploymentSpec.spec.replicas of type int32');
    assert.equal(jsonTypeError(deployment({ replicas: 2 ** 31 }), 'apps/v1', 'Deployment'), 'json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32');
    assert.equal(
      jsonTypeError(deployment({}, [{ name: 'c', image: 'x', command: 'sleep 1' }]), 'apps/v1', 'Deployment'),
      'json: cannot unmarshal string into Go struct field Container.spec.template.spec.containers.command of type []string',
    );
    assert.equal(
      jsonTypeError(deployment({}, [{ name: 'c', image: 'x', command: ['sleep', 1] }]), 'apps/v1', 'Deployment'),
      'json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.command of type string',
    );
    assert.equal(
      jsonTypeError(deployment({}, [{ name: 'c', image: 'x', ports: { containerPort: 80 } }]), 'apps/v1', 'Deployment'),
      'json: cannot unmarshal object into Go struct field Container.spec.template.spec.containers.ports of type []v1.ContainerPort',
    );
    assert.equal(jsonTypeError(deployment({ paused: 'yes' }), 'apps/v1', 'Deployment'), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool');
    assert.equal(jsonTypeError({ metadata: { labels: { a: 1 } } }, 'v1', 'ConfigMap'), 'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string');
    assert.equal(jsonTypeError({ metadata: {}, spec: 'x' }, 'v1', 'Pod'), 'json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec');
  });

  it('checks fields of inline (embedded) structs under the embedding field', () => {
    const pod = { metadata: {}, spec: { containers: [{ name: 'c', livenessProbe: { exec: { command: 'true' } } }] } };
    assert.match(jsonTypeError(pod, 'v1', 'Pod') ?? '', /^json: cannot unmarshal string into Go struct field ExecAction\.spec\.containers\.livenessProbe\.exec\.command of type \[\]string$/);
  });
});
