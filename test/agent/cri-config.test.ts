import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { containerSecurity, linuxResources, pullPolicy, sandboxConfig, NODE_LABEL } from '../../src/agent/runtimes/cri-config.js';
import type { Container, Pod } from '../../src/api/kinds/pod.js';

const c = (x: Partial<Container>): Container => ({ name: 'c', image: 'busybox:1.36', ...x });

describe('CRI configuration of pods and containers', () => {
  it('defaults imagePullPolicy as the API does: Always for :latest or no tag, else IfNotPresent; an explicit one wins', () => {
    assert.equal(pullPolicy(c({ image: 'nginx' })), 'Always');
    assert.equal(pullPolicy(c({ image: 'nginx:latest' })), 'Always');
    assert.equal(pullPolicy(c({ image: 'registry:5000/team/nginx' })), 'Always', 'a registry port is not a tag');
    assert.equal(pullPolicy(c({ image: 'registry:5000/team/nginx:1.27' })), 'IfNotPresent');
    assert.equal(pullPolicy(c({ image: 'nginx@sha256:' + '0'.repeat(64) })), 'IfNotPresent');
    assert.equal(pullPolicy(c({ image: 'nginx', imagePullPolicy: 'Never' })), 'Never');
  });

  it('turns requests and limits into cgroup settings as the kubelet does', () => {
    assert.deepEqual(linuxResources(c({})), { cpuShares: 2 });
    assert.deepEqual(linuxResources(c({ resources: { requests: { cpu: '250m' }, limits: { cpu: '1500m', memory: '64Mi' } } })), {
      cpuShares: 256,
      cpuPeriod: 100_000,
      cpuQuota: 150_000,
      memoryLimitInBytes: 64 * 1024 * 1024,
    });
    // A limit alone is also the request; a tiny limit still gets the smallest quota the kernel takes.
    assert.deepEqual(linuxResources(c({ resources: { limits: { cpu: '1m' } } })), { cpuShares: 2, cpuPeriod: 100_000, cpuQuota: 1_000 });
  });

  it('takes the security context from the container over the pod, and ignores capabilities that are not names', () => {
    const pod: Pod = { metadata: { name: 'p', uid: 'u' }, spec: { securityContext: { runAsUser: 1000, runAsGroup: 3000 }, containers: [] } };
    const sc = containerSecurity(pod, c({ securityContext: { runAsUser: 2000, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN', 'bad name'], drop: ['ALL'] } } }));
    assert.deepEqual(sc.runAsUser, { value: 2000 });
    assert.deepEqual(sc.runAsGroup, { value: 3000 });
    assert.equal(sc.readonlyRootfs, true);
    assert.equal(sc.noNewPrivs, true);
    assert.deepEqual(sc.capabilities, { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] });
    assert.equal(sc.namespaceOptions?.pid, 'CONTAINER');
  });

  it('puts each pod in its own cgroup under the node root, labelled with its node', () => {
    const pod: Pod = { metadata: { name: 'web-0', namespace: 'shop', uid: 'abc' }, spec: { containers: [], shareProcessNamespace: true } };
    const sb = sandboxConfig({ pod, nodeName: 'n1', logDirectory: '/logs', cgroupRoot: '/skiff/n1', attempt: 0 });
    assert.equal(sb.linux?.cgroupParent, '/skiff/n1/podabc');
    assert.equal(sb.labels?.[NODE_LABEL], 'n1');
    assert.equal(sb.hostname, 'web-0');
    assert.equal(sb.linux?.securityContext?.namespaceOptions?.pid, 'POD');
  });
});
