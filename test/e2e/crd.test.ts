// CustomResourceDefinitions against a real `skiff server`, driven as users drive them: kubectl (the
// dispatcher on PATH, 1.27 and 1.33) applying a CRD and its objects, listing them with their
// printer columns, watching, patching, scaling, applying server-side, explaining, deleting.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { TestServer, eventually, kubectlBinary } from '../support/cluster.js';

function crdManifest(group: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.${group}
spec:
  group: ${group}
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - {name: Schedule, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [cronSpec]
            properties:
              cronSpec: {type: string, pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'}
              image: {type: string}
              replicas: {type: integer, minimum: 0, maximum: 10, default: 1}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
`;
}

function cronTab(group: string, name: string, extra = ''): string {
  return `apiVersion: ${group}/v1
kind: CronTab
metadata:
  name: ${name}
spec:
  cronSpec: "*/5 * * * *"
  image: cron:1${extra}
`;
}

describe('CustomResourceDefinitions with kubectl', () => {
  const s = new TestServer('crd');
  before(async () => {
    await s.start();
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  for (const [i, version] of [undefined, '1.27', '1.33'].entries()) {
    const group = `v${i}.stable.example.com`;
    const opts = version ? { version } : {};
    const label = version ?? 'on PATH';

    it(`kubectl ${label}: a CRD and its object in one file, applied twice, as against a real cluster`, async () => {
      const file = `${crdManifest(group)}---\n${cronTab(group, 'nightly')}`;
      const first = await s.kubectl(['apply', '-f', '-'], { ...opts, input: file });
      // kubectl maps every object before applying any: the object's kind is not served yet.
      assert.match(first.stdout, new RegExp(`customresourcedefinition.apiextensions.k8s.io/crontabs.${group.replace(/\./g, '\\.')} created`));
      assert.match(first.stderr, /ensure CRDs are installed first/);
      await eventually(async () => (await s.kubectl(['get', 'crd', `crontabs.${group}`, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}'], opts)).stdout === 'True', 10_000, 'Established');
      const second = await s.kubectl(['apply', '-f', '-'], { ...opts, input: file });
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, new RegExp(`crontab.${group.replace(/\./g, '\\.')}/nightly created`));
    });

    it(`kubectl ${label}: lists with printer columns, fills defaults, refuses bad objects and strategic merge`, async () => {
      const table = await s.k(['get', `crontabs.${group}`], opts);
      assert.match(table, /^NAME\s+SCHEDULE\s+REPLICAS\s+AGE$/m);
      assert.match(table, /^nightly\s+\*\/5 \* \* \* \*\s+1\s+\d+s$/m);
      const bad = await s.kubectl(['apply', '-f', '-'], { ...opts, input: cronTab(group, 'broken').replace('*/5 * * * *', 'often') });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /spec\.cronSpec: Invalid value: "often": spec\.cronSpec in body should match/);
      const unknown = await s.kubectl(['apply', '-f', '-'], { ...opts, input: cronTab(group, 'extra', '\n  color: blue') });
      assert.match(unknown.stderr, /strict decoding error: unknown field "spec\.color"/);
      // Without validation the unknown field is pruned, as upstream prunes it.
      await s.k(['apply', '--validate=false', '-f', '-'], { ...opts, input: cronTab(group, 'extra', '\n  color: blue') });
      const extra = JSON.parse(await s.k(['get', `crontabs.${group}`, 'extra', '-o', 'json'], opts)) as { spec: Record<string, unknown> };
      assert.deepEqual(extra.spec, { cronSpec: '*/5 * * * *', image: 'cron:1', replicas: 1 });
      const smp = await s.kubectl(['patch', `crontabs.${group}`, 'extra', '-p', '{"spec":{"image":"cron:2"}}'], opts);
      assert.notEqual(smp.code, 0);
      assert.match(smp.stderr, /application\/strategic-merge-patch\+json is not supported/);
      const all = await s.k(['get', 'all'], opts);
      assert.match(all, new RegExp(`crontab\\.${group.replace(/\./g, '\\.')}/nightly`));
    });

    it(`kubectl ${label}: watches, patches, scales, applies server-side and explains`, async () => {
      const child = spawn(kubectlBinary(version), ['--kubeconfig', s.kubeconfig, '--cache-dir', s.cacheDir, 'get', `crontabs.${group}`, '-w', '--output-watch-events'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      try {
        await eventually(() => /ADDED\s+nightly/.test(out), 10_000, 'initial ADDED');
        await s.k(['patch', `crontabs.${group}`, 'nightly', '--type=merge', '-p', '{"spec":{"image":"cron:2"}}'], opts);
        await s.k(['scale', `crontabs.${group}`, 'nightly', '--replicas=4'], opts);
        await eventually(() => /MODIFIED\s+nightly\s+\S+ \S+ \S+ \S+ \S+\s+4/.test(out), 10_000, 'MODIFIED with 4 replicas');
      } finally {
        child.kill();
      }
      const json = await s.kubectl(['patch', `crontabs.${group}`, 'nightly', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":11}]'], opts);
      assert.match(json.stderr, /spec\.replicas: Invalid value: 11: spec\.replicas in body should be less than or equal to 10/);
      await s.k(['apply', '--server-side', '--field-manager=tagger', '-f', '-'], { ...opts, input: `apiVersion: ${group}/v1\nkind: CronTab\nmetadata: {name: nightly}\nspec: {cronSpec: "*/5 * * * *", tags: [a, b]}\n` });
      const applied = JSON.parse(await s.k(['get', `crontabs.${group}`, 'nightly', '-o', 'json', '--show-managed-fields'], opts)) as { spec: Record<string, unknown>; metadata: { managedFields: { manager: string; fieldsV1: Record<string, unknown> }[] } };
      assert.deepEqual(applied.spec, { cronSpec: '*/5 * * * *', image: 'cron:2', replicas: 4, tags: ['a', 'b'] });
      const tagger = applied.metadata.managedFields.find((m) => m.manager === 'tagger');
      assert.deepEqual(tagger?.fieldsV1, { 'f:spec': { 'f:cronSpec': {}, 'f:tags': { 'v:"a"': {}, 'v:"b"': {} } } });
      const explained = await s.k(['explain', `crontabs.${group}.spec`], opts);
      assert.match(explained, /^KIND:\s+CronTab$/m);
      assert.match(explained, /^\s+cronSpec\s+<string>/m);
      assert.match(explained, /^\s+tags\s+<\[\]string>/m);
      const old = await s.kubectl(['get', `crontabs.v1beta1.${group}`, 'nightly', '-o', 'jsonpath={.apiVersion}'], opts);
      assert.equal(old.stdout, `${group}/v1beta1`);
      assert.match(old.stderr, new RegExp(`Warning: ${group.replace(/\./g, '\\.')}/v1beta1 CronTab is deprecated`));
    });

    it(`kubectl ${label}: deleting the CRD deletes its objects, and its kind stops being served`, async () => {
      await s.k(['delete', 'crd', `crontabs.${group}`], { ...opts });
      const gone = await s.kubectl(['get', `crontabs.${group}`], opts);
      assert.notEqual(gone.code, 0);
      assert.match(gone.stderr, /the server doesn't have a resource type|could not find the requested resource/);
      // Made again, the CRD starts empty: its objects went with it.
      await s.k(['apply', '-f', '-'], { ...opts, input: crdManifest(group) });
      await eventually(async () => (await s.kubectl(['get', `crontabs.${group}`, '-o', 'name'], opts)).code === 0, 10_000, 'served again');
      assert.equal((await s.k(['get', `crontabs.${group}`, '-o', 'name'], opts)).trim(), '');
      await s.k(['delete', 'crd', `crontabs.${group}`], opts);
    });
  }

  it('a name another CRD of the group holds is refused until that CRD goes; every version watches in its own apiVersion', async () => {
    const group = 'names.stable.example.com';
    await s.k(['apply', '-f', '-'], { input: crdManifest(group) });
    const rival = crdManifest(group).replace(/crontabs/g, 'crontimers').replace('kind: CronTab', 'kind: CronTimer').replace('singular: crontab', 'singular: crontimer');
    await s.k(['apply', '-f', '-'], { input: rival });
    const accepted = (name: string) => s.k(['get', 'crd', name, '-o', 'jsonpath={.status.conditions[?(@.type=="NamesAccepted")].reason}']);
    await eventually(async () => (await accepted(`crontimers.${group}`)) === 'ShortNamesConflict', 10_000, 'the short name ct refused');
    // Written through v1beta1, seen through a v1 watch as v1.
    await eventually(async () => (await s.kubectl(['get', `crontabs.v1beta1.${group}`])).code === 0, 10_000, 'served');
    await s.k(['apply', '-f', '-'], { input: cronTab(group, 'old-style').replace(`${group}/v1`, `${group}/v1beta1`) });
    const watched = await s.kubectl(['get', '--raw', `/apis/${group}/v1/namespaces/default/crontabs?watch=1&timeoutSeconds=1`]);
    const events = watched.stdout.trim().split('\n').map((l) => JSON.parse(l) as { object: { apiVersion: string; metadata: { name: string } } });
    assert.deepEqual(events.map((e) => [e.object.metadata.name, e.object.apiVersion]), [['old-style', `${group}/v1`]]);
    await s.k(['delete', 'crd', `crontabs.${group}`]);
    await eventually(async () => (await accepted(`crontimers.${group}`)) === 'NoConflicts', 10_000, 'accepted once the holder is gone');
    await s.k(['delete', 'crd', `crontimers.${group}`]);
  });

  it('a terminating CRD refuses new objects while its own wait; CEL rules are accepted with a warning', async () => {
    const group = 'ending.stable.example.com';
    const withCel = crdManifest(group).replace("            required: [cronSpec]\n", "            required: [cronSpec]\n            x-kubernetes-validations: [{rule: 'self.replicas <= 5'}]\n");
    const applied = await s.kubectl(['apply', '-f', '-'], { input: withCel });
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stderr, /Warning: spec\.versions\[1\]\.schema\.openAPIV3Schema\.properties\[spec\]: x-kubernetes-validations rules are not evaluated by this server/);
    await eventually(async () => (await s.kubectl(['get', `crontabs.${group}`])).code === 0, 10_000, 'served');
    await s.k(['apply', '-f', '-'], { input: cronTab(group, 'held').replace('metadata:\n  name: held', 'metadata:\n  name: held\n  finalizers: [example.com/hold]') });
    await s.k(['delete', 'crd', `crontabs.${group}`, '--wait=false']);
    const refused = await eventually(async () => {
      const r = await s.kubectl(['create', '-f', '-'], { input: cronTab(group, 'late') });
      return /create not allowed while custom resource definition is terminating/.test(r.stderr) ? r : undefined;
    }, 10_000, 'creates refused while terminating');
    assert.notEqual(refused.code, 0);
    assert.match(await s.k(['get', 'crd', `crontabs.${group}`, '-o', 'jsonpath={.status.conditions[?(@.type=="Terminating")].message}']), /CustomResource deletion is in progress/);
    await s.k(['patch', `crontabs.${group}`, 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await eventually(async () => (await s.kubectl(['get', 'crd', `crontabs.${group}`])).code !== 0, 15_000, 'the CRD gone once its last object is');
  });

  it('a CRD and its objects survive a SIGKILL of the server and are served from its first request', async () => {
    const group = 'restart.stable.example.com';
    await s.k(['apply', '-f', '-'], { input: crdManifest(group) });
    await eventually(async () => (await s.kubectl(['get', `crontabs.${group}`])).code === 0, 10_000, 'served');
    await s.k(['apply', '-f', '-'], { input: cronTab(group, 'survivor') });
    s.kill('SIGKILL');
    await s.proc!.exited;
    await s.start();
    // No wait: the server serves the CRDs it finds before it answers anything.
    assert.match(await s.k(['get', `crontabs.${group}`, 'survivor', '-o', 'jsonpath={.spec.replicas}']), /^1$/);
    assert.match(await s.k(['api-resources', '--api-group', group]), /^crontabs\s+ct\s+restart\.stable\.example\.com\/v1\s+true\s+CronTab$/m);
    await s.k(['delete', 'crd', `crontabs.${group}`]);
  });

  it('collects garbage across custom and built-in kinds', async () => {
    const group = 'gc.stable.example.com';
    await s.k(['apply', '-f', '-'], { input: crdManifest(group) });
    await eventually(async () => (await s.kubectl(['get', `crontabs.${group}`])).code === 0, 10_000, 'served');
    await s.k(['apply', '-f', '-'], { input: cronTab(group, 'owner') });
    const uid = (await s.k(['get', `crontabs.${group}`, 'owner', '-o', 'jsonpath={.metadata.uid}'])).trim();
    await s.k(['apply', '-f', '-'], {
      input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  ownerReferences:\n  - {apiVersion: ${group}/v1, kind: CronTab, name: owner, uid: ${uid}}\n`,
    });
    // A controller applying status server-side owns what it applied, as a field manager of the status subresource.
    await s.k(['apply', '--server-side', '--subresource=status', '--field-manager=ctrl', '-f', '-'], { input: `apiVersion: ${group}/v1\nkind: CronTab\nmetadata: {name: owner}\nstatus: {replicas: 2}\n` });
    const withStatus = JSON.parse(await s.k(['get', `crontabs.${group}`, 'owner', '-o', 'json', '--show-managed-fields'])) as { status: { replicas: number }; metadata: { managedFields: { manager: string; operation: string; subresource?: string; fieldsV1: unknown }[] } };
    assert.equal(withStatus.status.replicas, 2);
    const ctrl = withStatus.metadata.managedFields.find((m) => m.manager === 'ctrl');
    assert.deepEqual([ctrl?.operation, ctrl?.subresource, ctrl?.fieldsV1], ['Apply', 'status', { 'f:status': { 'f:replicas': {} } }]);
    await s.k(['delete', `crontabs.${group}`, 'owner']);
    await eventually(async () => (await s.kubectl(['get', 'configmap', 'owned'])).code !== 0, 20_000, 'the dependent ConfigMap collected');
    await s.k(['delete', 'crd', `crontabs.${group}`]);
  });
});
