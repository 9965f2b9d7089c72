// The networking and storage kinds through real kubectl: applied server-side and client-side, read
// back as sent, printed with upstream's columns, and refused with upstream's messages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer, eventually } from '../support/cluster.js';

/** One object of each kind; `{{x}}` makes names unique per apply mode (cluster-scoped kinds share one space). */
const MANIFEST = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-{{x}}}
spec:
  podSelector: {matchLabels: {app: db}}
  policyTypes: [Ingress, Egress]
  ingress:
  - from:
    - podSelector: {matchLabels: {app: web}}
    - ipBlock: {cidr: 10.0.0.0/16, except: [10.0.1.0/24]}
    ports:
    - {protocol: TCP, port: 5432}
  egress:
  - to:
    - namespaceSelector: {}
    ports:
    - {protocol: UDP, port: 53}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx-{{x}}}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: p, scope: Cluster}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web-{{x}}}
spec:
  ingressClassName: nginx-{{x}}
  tls:
  - hosts: [web.example.com]
    secretName: web-tls
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: web, port: {number: 80}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: manual-{{x}}}
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true
parameters: {tier: gold}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: hostpath-{{x}}.csi.k8s.io}
spec:
  attachRequired: false
  podInfoOnMount: true
  volumeLifecycleModes: [Persistent, Ephemeral]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-{{x}}}
spec:
  drivers:
  - {name: hostpath.csi.k8s.io, nodeID: node-{{x}}, topologyKeys: [topology.hostpath.csi/node]}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va-{{x}}}
spec:
  attacher: hostpath.csi.k8s.io
  nodeName: node-{{x}}
  source: {persistentVolumeName: pv-{{x}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-{{x}}, labels: {disk: ssd}}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual-{{x}}
  hostPath: {path: /tmp/pv-{{x}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-{{x}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: manual-{{x}}
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tpl-{{x}}}
template:
  metadata: {labels: {app: web}}
  spec:
    containers:
    - {name: web, image: nginx:1.27}
`;

interface Doc {
  kind: string;
  name: string;
  body: Record<string, unknown>;
}

/** What `kubectl get -o json` must echo back: every field the manifest set (YAML parsed by kubectl itself). */
function containsAll(actual: unknown, expected: unknown, path: string): string[] {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object') return [`${path}: missing`];
    return Object.entries(expected).flatMap(([k, v]) => containsAll((actual as Record<string, unknown>)[k], v, `${path}.${k}`));
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [`${path}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`];
    return expected.flatMap((v, i) => containsAll(actual[i], v, `${path}[${i}]`));
  }
  return actual === expected ? [] : [`${path}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`];
}

describe('networking and storage kinds with kubectl', () => {
  const s = new TestServer('kinds-net');
  before(async () => {
    await s.start();
    await s.k(['create', 'namespace', 'ssa']);
    await s.k(['create', 'namespace', 'csa']);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  /** The manifest's documents as kubectl reads them (client-side dry run: no server involved in parsing). */
  async function docs(x: string): Promise<Doc[]> {
    const out = await s.k(['create', '--dry-run=client', '-o', 'json', '-f', '-'], { input: MANIFEST.replaceAll('{{x}}', x) });
    // One pretty-printed object per document, each opening and closing at the start of a line.
    const items = out.trim().split(/\n(?=\{\n)/).map((text) => JSON.parse(text) as Record<string, unknown>);
    return items.map((body) => ({ kind: String(body.kind), name: String((body.metadata as { name: string }).name), body }));
  }

  for (const [mode, ns, args, version] of [
    ['server-side', 'ssa', ['apply', '--server-side', '-f', '-'], '1.33'],
    ['client-side', 'csa', ['apply', '-f', '-'], '1.27'],
  ] as const) {
    it(`applies every kind ${mode} and reads each back unchanged`, async () => {
      const out = await s.k(['-n', ns, ...args], { input: MANIFEST.replaceAll('{{x}}', ns), version });
      for (const kind of ['networkpolicy.networking.k8s.io', 'ingress.networking.k8s.io', 'ingressclass.networking.k8s.io', 'storageclass.storage.k8s.io', 'csidriver.storage.k8s.io', 'csinode.storage.k8s.io', 'volumeattachment.storage.k8s.io', 'persistentvolume', 'persistentvolumeclaim', 'podtemplate']) {
        assert.match(out, new RegExp(`^${kind.replaceAll('.', '\\.')}/\\S+ (serverside-applied|created)$`, 'm'), out);
      }
      for (const doc of await docs(ns)) {
        const got = JSON.parse(await s.k(['-n', ns, 'get', doc.kind, doc.name, '-o', 'json']));
        const { metadata, ...rest } = doc.body;
        assert.deepEqual(containsAll(got, { ...rest, metadata: { name: doc.name, labels: (metadata as { labels?: unknown }).labels } }, doc.kind), [], `${doc.kind} ${doc.name}`);
      }
      // Applying the same manifest again changes nothing.
      const again = await s.k(['-n', ns, ...args], { input: MANIFEST.replaceAll('{{x}}', ns), version });
      if (mode === 'client-side') assert.doesNotMatch(again, / configured$/m, again);
    });
  }

  it('prints upstream columns and short names', async () => {
    const table = async (args: string[]) => (await s.k(args)).trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    // Nothing claims it (its class waits for a consumer), so the binder makes it Available.
    const pv = await eventually(async () => {
      const t = await table(['get', 'pv', 'pv-ssa']);
      return t[1]?.[4] === 'Available' && t;
    }, 10_000, 'pv-ssa Available');
    assert.deepEqual(pv[0], ['NAME', 'CAPACITY', 'ACCESS MODES', 'RECLAIM POLICY', 'STATUS', 'CLAIM', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'REASON', 'AGE']);
    assert.deepEqual(pv[1]!.slice(0, 7), ['pv-ssa', '5Gi', 'RWO', 'Retain', 'Available', 'manual-ssa', '<unset>']);
    const pvc = await table(['-n', 'ssa', 'get', 'pvc', '-o', 'wide']);
    assert.deepEqual(pvc[0], ['NAME', 'STATUS', 'VOLUME', 'CAPACITY', 'ACCESS MODES', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'AGE', 'VOLUMEMODE']);
    assert.equal(pvc[1]![0], 'data-ssa');
    assert.equal(pvc[1]![1], 'Pending');
    const sc = await table(['get', 'sc', 'manual-ssa']);
    assert.deepEqual(sc[0], ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE']);
    assert.deepEqual(sc[1]!.slice(0, 5), ['manual-ssa', 'kubernetes.io/no-provisioner', 'Retain', 'WaitForFirstConsumer', 'true']);
    const ing = await table(['-n', 'ssa', 'get', 'ing']);
    assert.deepEqual(ing[0], ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE']);
    assert.deepEqual(ing[1]!.slice(0, 4), ['web-ssa', 'nginx-ssa', 'web.example.com', '80, 443']);
    const np = await table(['-n', 'ssa', 'get', 'netpol']);
    assert.deepEqual(np[0], ['NAME', 'POD-SELECTOR', 'AGE']);
    assert.deepEqual(np[1]!.slice(0, 2), ['db-ssa', 'app=db']);
    const ic = await table(['get', 'ingressclass', 'nginx-ssa']);
    assert.deepEqual(ic[1]!.slice(0, 3), ['nginx-ssa', 'k8s.io/ingress-nginx', 'IngressParameters.k8s.example.com/p']);
    const csi = await table(['get', 'csidriver', 'hostpath-ssa.csi.k8s.io']);
    assert.deepEqual(csi[0], ['NAME', 'ATTACHREQUIRED', 'PODINFOONMOUNT', 'STORAGECAPACITY', 'TOKENREQUESTS', 'REQUIRESREPUBLISH', 'MODES', 'AGE']);
    assert.deepEqual(csi[1]!.slice(0, 7), ['hostpath-ssa.csi.k8s.io', 'false', 'true', 'false', '<unset>', 'false', 'Persistent,Ephemeral']);
    const va = await table(['get', 'volumeattachment', 'va-ssa']);
    assert.deepEqual(va[1]!.slice(0, 5), ['va-ssa', 'hostpath.csi.k8s.io', 'pv-ssa', 'node-ssa', 'false']);
    const pt = await table(['-n', 'ssa', 'get', 'podtemplate']);
    assert.deepEqual(pt, [['NAME', 'CONTAINERS', 'IMAGES', 'POD LABELS'], ['tpl-ssa', 'web', 'nginx:1.27', 'app=web']]);
    const resources = await s.k(['api-resources']);
    assert.match(resources, /^persistentvolumes\s+pv\s+v1\s+false\s+PersistentVolume$/m);
    assert.match(resources, /^networkpolicies\s+netpol\s+networking\.k8s\.io\/v1\s+true\s+NetworkPolicy$/m);
    assert.match(resources, /^storageclasses\s+sc\s+storage\.k8s\.io\/v1\s+false\s+StorageClass$/m);
  });

  it('refuses bad objects with upstream messages, and StorageClass changes it forbids', async () => {
    const ing = await s.kubectl(['-n', 'ssa', 'apply', '-f', '-'], {
      input: 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad}\nspec:\n  rules:\n  - host: a.example.com\n    http:\n      paths:\n      - path: /\n        backend: {service: {name: web, port: {number: 80}}}\n',
    });
    assert.notEqual(ing.code, 0);
    assert.match(ing.stderr, /The Ingress "bad" is invalid: spec\.rules\[0\]\.http\.paths\[0\]\.pathType: Required value: pathType must be specified/);
    const sc = await s.kubectl(['patch', 'sc', 'manual-ssa', '--type=merge', '-p', '{"parameters":{"tier":"silver"},"reclaimPolicy":"Delete"}']);
    assert.notEqual(sc.code, 0);
    assert.match(sc.stderr, /StorageClass "manual-ssa" is invalid: \n\* parameters: Forbidden: updates to parameters are forbidden\.\n\* reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden\./);
    const pvc = await s.kubectl(['-n', 'ssa', 'create', '-f', '-'], { input: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: nosize}\nspec: {accessModes: [ReadWriteOnce]}\n' });
    assert.match(pvc.stderr, /PersistentVolumeClaim "nosize" is invalid: spec\.resources\[storage\]: Required value/);
  });

  it('binds a static volume to its claim, releases it when the claim goes, and deletes it by policy', async () => {
    const volume = (name: string, size: string, policy: string) =>
      `apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: ${name}, labels: {tier: fast}}\nspec:\n  capacity: {storage: ${size}}\n  accessModes: [ReadWriteOnce, ReadOnlyMany]\n  persistentVolumeReclaimPolicy: ${policy}\n  storageClassName: static\n  hostPath: {path: /tmp/${name}}\n---\n`;
    await s.k(['apply', '-f', '-'], { input: volume('big', '10Gi', 'Retain') + volume('small', '2Gi', 'Delete') + volume('tiny', '500Mi', 'Retain') });
    const claim = (name: string) =>
      `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ${name}, namespace: ssa}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: static\n  selector: {matchLabels: {tier: fast}}\n  resources: {requests: {storage: 1Gi}}\n`;
    await s.k(['apply', '-f', '-'], { input: claim('one') });
    // The smallest volume that fits (not the 500Mi one, not the 10Gi one).
    const bound = await eventually(async () => {
      const c = JSON.parse(await s.k(['-n', 'ssa', 'get', 'pvc', 'one', '-o', 'json']));
      return c.status?.phase === 'Bound' && c;
    }, 15_000, 'claim one Bound');
    assert.equal(bound.spec.volumeName, 'small');
    assert.deepEqual(bound.status.capacity, { storage: '2Gi' });
    assert.deepEqual(bound.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    assert.equal(bound.metadata.annotations['pv.kubernetes.io/bind-completed'], 'yes');
    const pv = JSON.parse(await s.k(['get', 'pv', 'small', '-o', 'json']));
    assert.equal(pv.status.phase, 'Bound');
    assert.deepEqual([pv.spec.claimRef.namespace, pv.spec.claimRef.name, pv.spec.claimRef.uid], ['ssa', 'one', bound.metadata.uid]);
    assert.deepEqual(pv.metadata.finalizers, ['kubernetes.io/pv-protection']);
    assert.match(await s.k(['-n', 'ssa', 'get', 'pvc', 'one']), /^one\s+Bound\s+small\s+2Gi\s+RWO,ROX\s+static\s+<unset>\s+/m);
    assert.match(await s.k(['get', 'pv', 'small']), /^small\s+2Gi\s+RWO,ROX\s+Delete\s+Bound\s+ssa\/one\s+static\s+/m);

    // Deleting the claim releases the volume; its Delete policy then removes it (and its finalizer goes first).
    await s.k(['-n', 'ssa', 'delete', 'pvc', 'one', '--wait=false']);
    await eventually(async () => (await s.kubectl(['get', 'pv', 'small'])).stderr.includes('NotFound'), 15_000, 'pv small deleted');
    await s.k(['apply', '-f', '-'], { input: claim('two').replace('storage: 1Gi', 'storage: 3Gi') });
    await eventually(async () => JSON.parse(await s.k(['-n', 'ssa', 'get', 'pvc', 'two', '-o', 'json'])).spec.volumeName === 'big', 15_000, 'claim two bound to big');
    await s.k(['-n', 'ssa', 'delete', 'pvc', 'two']);
    // Retain keeps the released volume and its claimRef.
    await eventually(async () => JSON.parse(await s.k(['get', 'pv', 'big', '-o', 'json'])).status.phase === 'Released', 15_000, 'pv big Released');
    assert.match(await s.k(['get', 'pv', 'big']), /^big\s+10Gi\s+RWO,ROX\s+Retain\s+Released\s+ssa\/two\s+/m);
  });
});
