import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mountServiceAccountToken } from '../../src/apiserver/admission/service-account.js';
import type { KubeObject } from '../../src/api/types.js';

const pod = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec });
type Spec = { volumes?: { name: string; projected?: { sources: Record<string, unknown>[] } }[]; containers: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[]; initContainers?: { volumeMounts?: unknown[] }[] };

describe('ServiceAccount admission: the token volume', () => {
  it('adds a projected volume of a token, the cluster CA and the namespace, mounted read-only in every container', () => {
    const p = pod({ containers: [{ name: 'a' }, { name: 'b', volumeMounts: [{ name: 'x', mountPath: '/x' }] }], initContainers: [{ name: 'i' }], volumes: [{ name: 'x', emptyDir: {} }] });
    mountServiceAccountToken(p, undefined, 'abcde');
    const spec = p.spec as Spec;
    const v = spec.volumes!.find((x) => x.name === 'kube-api-access-abcde');
    assert.deepEqual(v?.projected?.sources.map((src) => Object.keys(src)[0]), ['serviceAccountToken', 'configMap', 'downwardAPI']);
    for (const c of [...spec.containers, ...(spec.initContainers as Spec['containers'])]) {
      assert.deepEqual(c.volumeMounts!.at(-1), { name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' });
    }
  });

  it('adds nothing when the pod or its service account opts out (the pod decides), or a container mounts something there already', () => {
    const optedOut = pod({ automountServiceAccountToken: false, containers: [{ name: 'a' }] });
    mountServiceAccountToken(optedOut, undefined, 'abcde');
    assert.equal((optedOut.spec as Spec).volumes, undefined);
    const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' }, automountServiceAccountToken: false } as KubeObject;
    const byAccount = pod({ containers: [{ name: 'a' }] });
    mountServiceAccountToken(byAccount, account, 'abcde');
    assert.equal((byAccount.spec as Spec).volumes, undefined);
    const podWins = pod({ automountServiceAccountToken: true, containers: [{ name: 'a' }] });
    mountServiceAccountToken(podWins, account, 'abcde');
    assert.equal((podWins.spec as Spec).volumes?.length, 1);
    const own = pod({ containers: [{ name: 'a', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }], volumes: [{ name: 'mine', secret: { secretName: 's' } }] });
    mountServiceAccountToken(own, undefined, 'abcde');
    assert.equal((own.spec as Spec).volumes?.length, 1);
  });

  it('leaves a spec of the wrong shape for validation to refuse, without failing itself', () => {
    for (const spec of [{ containers: [null] }, { containers: 'x' }, { containers: [{ volumeMounts: 7 }] }, { containers: [], volumes: {} }]) {
      const p = pod(structuredClone(spec));
      assert.doesNotThrow(() => mountServiceAccountToken(p, undefined, 'abcde'));
      assert.deepEqual(p.spec, spec, 'unchanged');
    }
  });
});
