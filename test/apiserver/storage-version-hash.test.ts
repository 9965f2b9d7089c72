// discovery's storageVersionHash is upstream's: the first 8 bytes of sha256("group/version/kind")
// (group '' for core, so "/v1/Pod"), base64 with padding (apiserver's
// pkg/endpoints/discovery/storageversionhash.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Discovery, storageVersionHash } from '../../src/apiserver/discovery.js';
import { allResourceTypes } from '../../src/api/registry.js';
import { apiVersionOf, parseApiVersion } from '../../src/api/types.js';

// Upstream's own record of the hashes its built-in resources serve, "shouldn't change unless we
// intentionally change the storage version of a resource" (kubernetes/kubernetes
// pkg/controlplane/storageversionhashdata/data.go, GVRToStorageVersionHash), for the ones skiff
// serves.
const UPSTREAM: ReadonlyMap<string, string> = new Map([
  // kube-aggregator's kind (not in that file, which covers kube-apiserver's own): the same function's value.
  ['apiregistration.k8s.io/v1/apiservices', 'InPBPD7+PqM='],
  ['apps/v1/controllerrevisions', '85nkx63pcBU='],
  ['apps/v1/daemonsets', 'dd7pWHUlMKQ='],
  ['apps/v1/deployments', '8aSe+NMegvE='],
  ['apps/v1/replicasets', 'P1RzHs8/mWQ='],
  ['apps/v1/statefulsets', 'H+vl74LkKdo='],
  ['autoscaling/v1/horizontalpodautoscalers', 'qwQve8ut294='],
  ['autoscaling/v2/horizontalpodautoscalers', 'qwQve8ut294='],
  ['batch/v1/cronjobs', 'sd5LIXh4Fjs='],
  ['batch/v1/jobs', 'mudhfqk/qZY='],
  ['certificates.k8s.io/v1/certificatesigningrequests', '95fRKMXA+00='],
  ['coordination.k8s.io/v1/leases', 'gqkMMb/YqFM='],
  ['discovery.k8s.io/v1/endpointslices', 'qgS0xkrxYAI='],
  ['flowcontrol.apiserver.k8s.io/v1/flowschemas', 'GJVAJZSZBIw='],
  ['flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', 'Kir5PVfvNeI='],
  ['networking.k8s.io/v1/ingressclasses', 'l/iqIbDgFyQ='],
  ['networking.k8s.io/v1/ingresses', '39NQlfNR+bo='],
  ['networking.k8s.io/v1/networkpolicies', 'YpfwF18m1G8='],
  ['policy/v1/poddisruptionbudgets', 'EVWiDmWqyJw='],
  ['rbac.authorization.k8s.io/v1/clusterrolebindings', '48tpQ8gZHFc='],
  ['rbac.authorization.k8s.io/v1/clusterroles', 'bYE5ZWDrJ44='],
  ['rbac.authorization.k8s.io/v1/rolebindings', 'eGsCzGH6b1g='],
  ['rbac.authorization.k8s.io/v1/roles', '7FuwZcIIItM='],
  ['scheduling.k8s.io/v1/priorityclasses', '1QwjyaZjj3Y='],
  ['admissionregistration.k8s.io/v1/validatingwebhookconfigurations', 'B0wHjQmsGNk='],
  ['admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', 'Sqi0GUgDaX0='],
  ['storage.k8s.io/v1/csidrivers', 'hL6j/rwBV5w='],
  ['storage.k8s.io/v1/csinodes', 'Pe62DkZtjuo='],
  ['storage.k8s.io/v1/storageclasses', 'K+m6uJwbjGY='],
  ['storage.k8s.io/v1/volumeattachments', 'tJx/ezt6UDU='],
  ['v1/configmaps', 'qFsyl6wFWjQ='],
  ['v1/endpoints', 'fWeeMqaN/OA='],
  ['v1/events', 'r2yiGXH7wu8='],
  ['v1/limitranges', 'EBKMFVe6cwo='],
  ['v1/namespaces', 'Q3oi5N2YM8M='],
  ['v1/nodes', 'XwShjMxG9Fs='],
  ['v1/persistentvolumeclaims', 'QWTyNDq0dC4='],
  ['v1/persistentvolumes', 'HN/zwEC+JgM='],
  ['v1/pods', 'xPOwRZ+Yhw8='],
  ['v1/podtemplates', 'LIXB2x4IFpk='],
  ['v1/replicationcontrollers', 'Jond2If31h0='],
  ['v1/resourcequotas', '8uhSgffRX6w='],
  ['v1/secrets', 'S6u1pOWzb84='],
  ['v1/serviceaccounts', 'pbx9ZvyFpBE='],
  ['v1/services', '0/CO1lhkEBI='],

]);

test("storageVersionHash is upstream's function of group/version/kind", () => {
  assert.equal(storageVersionHash('', 'v1', 'Pod'), UPSTREAM.get('v1/pods'));
  assert.equal(storageVersionHash('apps', 'v1', 'Deployment'), UPSTREAM.get('apps/v1/deployments'));
});

test("every built-in resource's discovery entry has the hash upstream's discovery serves for it", () => {
  const discovery = new Discovery([...allResourceTypes]);
  const served = new Map<string, unknown>();
  for (const gv of new Set(allResourceTypes.map((rt) => apiVersionOf(rt.group, rt.version)))) {
    const { group, version } = parseApiVersion(gv);
    const list = discovery.apiResourceList(group, version) as { resources: { name: string; storageVersionHash?: string }[] };
    for (const r of list.resources) if (!r.name.includes('/')) served.set(`${gv}/${r.name}`, r.storageVersionHash);
  }
  // A kind added later is held to upstream's value too: it has to be added to the table above.
  assert.deepEqual(new Set(served.keys()), new Set(UPSTREAM.keys()));
  for (const [gvr, hash] of UPSTREAM) assert.equal(served.get(gvr), hash, gvr);
});
