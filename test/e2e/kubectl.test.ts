// kubectl (the dispatcher on PATH, and the 1.27 and 1.33 binaries) against a real `skiff server`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SKIFF_BIN, TestServer, eventually, kubectlBinary } from '../support/cluster.js';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels: {app: api}
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: nginx:1.27
        env:
        - {name: MODE, value: prod}
`;

describe('kubectl against skiff server', () => {
  const s = new TestServer('kubectl');
  before(async () => {
    await s.start();
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('reports a real version through the dispatcher and the pinned binaries', async () => {
    const out = await s.k(['version']);
    assert.match(out, /Server Version: v1\.32\./);
    for (const v of ['1.27', '1.33']) {
      const o = await s.k(['version'], { version: v });
      assert.match(o, /Server Version: .*v1\.32\./);
    }
  });

  it('lists api-resources with short names and groups', async () => {
    const out = await s.k(['api-resources']);
    assert.match(out, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    assert.match(out, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    assert.match(out, /^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
    assert.match(out, /^poddisruptionbudgets\s+pdb\s+policy\/v1\s+true\s+PodDisruptionBudget$/m);
    assert.match(await s.k(['api-versions']), /^apps\/v1$/m);
  });

  it('has the default namespaces and shows them as a table', async () => {
    const out = await s.k(['get', 'namespaces']);
    assert.match(out, /^NAME\s+STATUS\s+AGE$/m);
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.match(out, new RegExp(`^${ns}\\s+Active\\s+`, 'm'));
  });

  it('creates a namespace, configmap and deployment with the generators (protobuf bodies on 1.32/1.33)', async () => {
    for (const v of [undefined, '1.33', '1.27']) {
      const suffix = v ? v.replace('.', '') : 'path';
      assert.match(await s.k(['create', 'namespace', `gen-${suffix}`], { ...(v ? { version: v } : {}) }), new RegExp(`namespace/gen-${suffix} created`));
      assert.match(
        await s.k(['-n', `gen-${suffix}`, 'create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=0'], { ...(v ? { version: v } : {}) }),
        /deployment.apps\/web created/,
      );
      assert.match(
        await s.k(['-n', `gen-${suffix}`, 'create', 'configmap', 'cfg', '--from-literal=a=1', '--from-literal=b='], { ...(v ? { version: v } : {}) }),
        /configmap\/cfg created/,
      );
      const dep = JSON.parse(await s.k(['-n', `gen-${suffix}`, 'get', 'deployment', 'web', '-o', 'json']));
      assert.equal(dep.spec.replicas, 0, 'replicas: 0 survives the protobuf round trip');
      assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:1.27');
      assert.equal(dep.spec.strategy.type, 'RollingUpdate', 'defaulted');
      const cm = JSON.parse(await s.k(['-n', `gen-${suffix}`, 'get', 'configmap', 'cfg', '-o', 'json']));
      assert.deepEqual(cm.data, { a: '1', b: '' });
    }
  });

  it('applies, re-applies, and server-side applies', async () => {
    assert.match(await s.k(['apply', '-f', '-'], { input: DEPLOYMENT }), /deployment.apps\/api created/);
    assert.match(await s.k(['apply', '-f', '-'], { input: DEPLOYMENT }), /deployment.apps\/api unchanged/);
    const changed = DEPLOYMENT.replace('replicas: 2', 'replicas: 3').replace('nginx:1.27', 'nginx:1.28');
    assert.match(await s.k(['apply', '-f', '-'], { input: changed }), /deployment.apps\/api configured/);
    const dep = JSON.parse(await s.k(['get', 'deploy', 'api', '-o', 'json']));
    assert.equal(dep.spec.replicas, 3);
    assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:1.28');
    assert.deepEqual(dep.spec.template.spec.containers[0].env, [{ name: 'MODE', value: 'prod' }]);
    assert.equal(dep.metadata.generation, 2);

    const ssa = DEPLOYMENT.replace(/name: api$/m, 'name: ssa');
    assert.match(await s.k(['apply', '--server-side', '-f', '-'], { input: ssa }), /deployment.apps\/ssa serverside-applied/);
    assert.match(await s.k(['apply', '--server-side', '-f', '-'], { input: ssa.replace('replicas: 2', 'replicas: 5') }), /serverside-applied/);
    assert.equal(JSON.parse(await s.k(['get', 'deploy', 'ssa', '-o', 'json'])).spec.replicas, 5);
    // Another manager owning replicas makes a non-forced apply conflict, as upstream.
    await s.k(['scale', 'deploy', 'ssa', '--replicas=1']);
    const conflict = await s.kubectl(['apply', '--server-side', '-f', '-'], { input: ssa.replace('replicas: 2', 'replicas: 4') });
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict/i);
    assert.match(await s.k(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: ssa.replace('replicas: 2', 'replicas: 4') }), /serverside-applied/);
  });

  it('prunes with kubectl apply --prune and its default allowlist, on the oldest and newest kubectl', async () => {
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: default, labels: {set: pruned}}\n`;
    for (const version of ['1.27', '1.33']) {
      await s.k(['apply', '--prune', '-l', 'set=pruned', '-f', '-'], { version, input: `${cm('keep')}---\n${cm('drop')}` });
      // kubectl's default allowlist names PersistentVolumeClaims, Ingresses and the rest: all served, so nothing fails.
      const second = await s.k(['apply', '--prune', '-l', 'set=pruned', '-f', '-'], { version, input: cm('keep') });
      assert.match(second, /^configmap\/drop pruned$/m, version);
      assert.equal((await s.kubectl(['get', 'configmap', 'drop'])).code, 1);
    }
  });

  it('takes kind: List manifests (what get -o yaml writes) in create, apply and apply --server-side, on every kubectl', async () => {
    const list = (tag: string, value: string, extra = '') => `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: list-${tag}-a}
  data: {k: "${value}"}${extra}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: list-${tag}-b}
  data: {k: "${value}"}
`;
    for (const v of [undefined, '1.27', '1.33']) {
      const tag = v ? v.replace('.', '') : 'path';
      const opt = v ? { version: v } : {};
      assert.match(await s.k(['create', '-f', '-'], { ...opt, input: list(`c${tag}`, '1') }), new RegExp(`configmap/list-c${tag}-b created`));
      assert.match(await s.k(['apply', '-f', '-'], { ...opt, input: list(tag, '1') }), new RegExp(`configmap/list-${tag}-a created`));
      assert.match(await s.k(['apply', '-f', '-'], { ...opt, input: list(tag, '2') }), new RegExp(`configmap/list-${tag}-b configured`));
      assert.match(await s.k(['apply', '--server-side', '-f', '-'], { ...opt, input: list(`s${tag}`, '3') }), new RegExp(`configmap/list-s${tag}-a serverside-applied`));
      // The exported list goes back in as it came out.
      const exported = await s.k(['get', 'configmap', `list-${tag}-a`, `list-${tag}-b`, '-o', 'yaml'], opt);
      assert.match(exported, /^kind: List$/m);
      assert.match(await s.k(['apply', '-f', '-'], { ...opt, input: exported }), new RegExp(`configmap/list-${tag}-a (unchanged|configured)`));
      assert.equal(JSON.parse(await s.k(['get', 'configmap', `list-${tag}-b`, '-o', 'json'])).data.k, '2');
      // Deleted, the export comes back as new objects: kubectl drops the old resourceVersions when it
      // creates. A client that sends one gets upstream's refusal.
      await s.k(['delete', '-f', '-'], { ...opt, input: exported });
      assert.match(await s.k(['apply', '-f', '-'], { ...opt, input: exported }), new RegExp(`configmap/list-${tag}-a created`));
      const withRv = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `list-${tag}-rv`, resourceVersion: '12' } });
      const raw = await s.kubectl(['create', '--raw', '/api/v1/namespaces/default/configmaps', '-f', '-'], { ...opt, input: withRv });
      assert.notEqual(raw.code, 0);
      assert.match(raw.stderr, /resourceVersion should not be set on objects to be created/);
      // Items are still validated, by the server.
      const bad = await s.kubectl(['create', '-f', '-'], { ...opt, input: list(`x${tag}`, '1', '\n  bogus: 1') });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /unknown field "bogus"/);
    }
  });

  it('creates from a file, replaces, and reports conflicts and duplicates as kubectl users know them', async () => {
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: solo\ndata:\n  k: v\n';
    assert.match(await s.k(['create', '-f', '-'], { input: cm }), /configmap\/solo created/);
    const dup = await s.kubectl(['create', '-f', '-'], { input: cm });
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /Error from server \(AlreadyExists\): error when creating "STDIN": configmaps "solo" already exists/);
    const current = JSON.parse(await s.k(['get', 'cm', 'solo', '-o', 'json']));
    const replaced = { ...current, data: { k: 'v2' } };
    assert.match(await s.k(['replace', '-f', '-'], { input: JSON.stringify(replaced) }), /configmap\/solo replaced/);
    const stale = await s.kubectl(['replace', '-f', '-'], { input: JSON.stringify({ ...current, data: { k: 'v3' } }) });
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /Error from server \(Conflict\): error when replacing "STDIN": Operation cannot be fulfilled on configmaps "solo": the object has been modified/);
  });

  it('prints NotFound and Invalid exactly as against a real cluster', async () => {
    const nf = await s.kubectl(['get', 'node', 'x']);
    assert.equal(nf.code, 1);
    assert.equal(nf.stderr.trim(), 'Error from server (NotFound): nodes "x" not found');
    const bad = await s.kubectl(['create', '-f', '-'], {
      input: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: Bad_Name\nspec:\n  replicas: -1\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: i}]\n',
    });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /The Deployment "Bad_Name" is invalid: /);
    assert.match(bad.stderr, /\* metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    assert.match(bad.stderr, /\* spec\.replicas: Invalid value: -1: must be greater than or equal to 0/);
  });

  it('refuses, warns about or drops unknown nested fields as --validate asks (strict, warn, false)', async () => {
    const pod = (name: string) =>
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: c\n    image: i\n    comand: [sleep, "1"]\n    securityContext: {runAsUser: 1000, runAsUzer: 1}\n`;
    const strict = await s.kubectl(['create', '-f', '-'], { input: pod('strict') });
    assert.equal(strict.code, 1);
    assert.equal(
      strict.stderr.trim(),
      'Error from server (BadRequest): error when creating "STDIN": Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].comand", unknown field "spec.containers[0].securityContext.runAsUzer"',
    );
    const warn = await s.kubectl(['create', '--validate=warn', '-f', '-'], { input: pod('warned') });
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /Warning: unknown field "spec\.containers\[0\]\.comand"/);
    assert.match(await s.k(['create', '--validate=false', '-f', '-'], { input: pod('ignored') }), /pod\/ignored created/);
    for (const name of ['warned', 'ignored']) {
      const c = JSON.parse(await s.k(['get', 'pod', name, '-o', 'json'])).spec.containers[0];
      assert.equal(c.comand, undefined, 'unknown fields are not stored');
      assert.deepEqual(c.securityContext, { runAsUser: 1000 });
    }
    // kubectl patch sends no fieldValidation: the server's default (Warn) applies to the result.
    const patch = await s.kubectl(['patch', 'pod', 'warned', '--type=merge', '-p', '{"spec":{"activeDeadlineSecondz":5}}']);
    assert.equal(patch.code, 0, patch.stderr);
    assert.match(patch.stderr, /Warning: unknown field "spec\.activeDeadlineSecondz"/);
    assert.equal(JSON.parse(await s.k(['get', 'pod', 'warned', '-o', 'json'])).spec.activeDeadlineSecondz, undefined);
    await s.k(['delete', 'pod', 'warned', 'ignored', '--wait=false']);
  });

  it('labels, annotates, selects by label and field, and prints -o wide/yaml/jsonpath', async () => {
    await s.k(['create', 'configmap', 'one', '--from-literal=x=1']);
    await s.k(['create', 'configmap', 'two', '--from-literal=x=2']);
    assert.match(await s.k(['label', 'cm', 'one', 'tier=fe']), /configmap\/one labeled/);
    assert.match(await s.k(['annotate', 'cm', 'one', 'note=hi']), /configmap\/one annotated/);
    const byLabel = await s.k(['get', 'cm', '-l', 'tier=fe', '-o', 'name']);
    assert.equal(byLabel.trim(), 'configmap/one');
    const notLabel = await s.k(['get', 'cm', '-l', '!tier', '-o', 'name']);
    assert.match(notLabel, /configmap\/two/);
    assert.doesNotMatch(notLabel, /configmap\/one/);
    const byField = await s.k(['get', 'cm', '--field-selector', 'metadata.name=two', '-o', 'name']);
    assert.equal(byField.trim(), 'configmap/two');
    const badField = await s.kubectl(['get', 'cm', '--field-selector', 'foo=bar']);
    assert.equal(badField.code, 1);
    assert.match(badField.stderr, /field label not supported: foo/);
    assert.match(await s.k(['get', 'cm', 'one', '-o', 'yaml']), /note: hi/);
    assert.equal(await s.k(['get', 'cm', 'one', '-o', 'jsonpath={.metadata.labels.tier}']), 'fe');
    assert.match(await s.k(['get', 'deploy', '-o', 'wide']), /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    assert.match(await s.k(['label', 'cm', 'one', 'tier-']), /configmap\/one unlabeled/);
  });

  it('patches with every patch type and deletes', async () => {
    await s.k(['create', 'configmap', 'p', '--from-literal=a=1']);
    await s.k(['patch', 'cm', 'p', '--type=merge', '-p', '{"data":{"b":"2"}}']);
    await s.k(['patch', 'cm', 'p', '--type=json', '-p', '[{"op":"remove","path":"/data/a"}]']);
    await s.k(['patch', 'cm', 'p', '-p', '{"data":{"c":"3"}}']);
    assert.deepEqual(JSON.parse(await s.k(['get', 'cm', 'p', '-o', 'json'])).data, { b: '2', c: '3' });
    const failed = await s.kubectl(['patch', 'cm', 'p', '--type=json', '-p', '[{"op":"test","path":"/data/b","value":"nope"}]']);
    assert.equal(failed.code, 1);
    assert.match(await s.k(['delete', 'cm', 'p']), /configmap "p" deleted/);
    const gone = await s.kubectl(['delete', 'cm', 'p']);
    assert.match(gone.stderr, /Error from server \(NotFound\): configmaps "p" not found/);
  });

  it('cordons, taints and describes a node; scale and chunked lists work', async () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { 'node-role.kubernetes.io/worker': '' } } };
    await s.k(['create', '-f', '-'], { input: JSON.stringify(node) });
    assert.match(await s.k(['cordon', 'node-a']), /node\/node-a cordoned/);
    assert.match(await s.k(['get', 'nodes']), /^node-a\s+Unknown,SchedulingDisabled\s+worker\s+/m);
    assert.match(await s.k(['uncordon', 'node-a']), /node\/node-a uncordoned/);
    assert.match(await s.k(['taint', 'nodes', 'node-a', 'dedicated=gpu:NoSchedule']), /node\/node-a tainted/);
    const taints = JSON.parse(await s.k(['get', 'node', 'node-a', '-o', 'json'])).spec.taints;
    assert.deepEqual(taints, [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
    assert.match(await s.k(['taint', 'nodes', 'node-a', 'dedicated=gpu:NoSchedule-']), /node\/node-a untainted/);
    assert.match(await s.k(['describe', 'node', 'node-a']), /Name:\s+node-a/);
    assert.match(await s.k(['scale', 'deploy', 'api', '--replicas=4']), /deployment.apps\/api scaled/);
    assert.equal(JSON.parse(await s.k(['get', 'deploy', 'api', '-o', 'json'])).spec.replicas, 4);
    const chunked = await s.k(['get', 'ns', '--chunk-size=1', '-o', 'name']);
    assert.ok(chunked.trim().split('\n').length >= 4);
  });

  it('publishes itself in the kubernetes Service and Endpoints', async () => {
    const port = new URL((await s.k(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']))).port;
    await eventually(async () => (await s.k(['get', 'endpoints', 'kubernetes'])).includes(`127.0.0.1:${port}`), 15_000, 'endpoints');
    assert.match(await s.k(['get', 'svc', 'kubernetes']), /^kubernetes\s+ClusterIP\s+10\.43\.0\.1\s+<none>\s+443\/TCP/m);
    // `skiff haproxy-config` reads the members from those Endpoints.
    const cfg = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [SKIFF_BIN, 'haproxy-config', '--kubeconfig', s.kubeconfig, '--control-plane-endpoint', '127.0.0.1:7443'], (err, out) => (err ? reject(err) : resolve(out))),
    );
    assert.match(cfg, /^\s+bind 127\.0\.0\.1:7443$/m);
    assert.match(cfg, new RegExp(`^\\s+server member-1 127\\.0\\.0\\.1:${port}$`, 'm'));
    assert.match(cfg, /option httpchk GET \/readyz/);
  });

  it('deletes a namespace and everything in it', async () => {
    await s.k(['create', 'namespace', 'doomed']);
    await s.k(['-n', 'doomed', 'create', 'configmap', 'c1', '--from-literal=a=b']);
    await s.k(['-n', 'doomed', 'create', 'deployment', 'd1', '--image=nginx', '--replicas=0']);
    assert.match(await s.k(['delete', 'namespace', 'doomed', '--wait=false']), /namespace "doomed" deleted/);
    await eventually(async () => (await s.kubectl(['get', 'namespace', 'doomed'])).stderr.includes('NotFound'), 15_000, 'namespace gone');
    assert.match((await s.kubectl(['-n', 'doomed', 'get', 'configmap', 'c1'])).stderr, /NotFound/);
  });

  it('tells what a terminating namespace waits for in its conditions, and finishes once the last finalizer goes', async () => {
    await s.k(['create', 'namespace', 'stuck']);
    const held = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: 'stuck', finalizers: ['example.com/hold'] } };
    await s.k(['create', '-f', '-'], { input: JSON.stringify(held) });
    await s.k(['delete', 'namespace', 'stuck', '--wait=false']);
    const condition = (type: string) => s.k(['get', 'namespace', 'stuck', '-o', `jsonpath={.status.conditions[?(@.type=="${type}")].message}`]);
    await eventually(async () => (await condition('NamespaceFinalizersRemaining')) === 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances', 15_000, 'finalizers condition');
    assert.equal(await condition('NamespaceContentRemaining'), 'Some resources are remaining: configmaps. has 1 resource instances');
    await s.k(['patch', 'configmap', 'held', '-n', 'stuck', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await eventually(async () => (await s.kubectl(['get', 'namespace', 'stuck'])).stderr.includes('NotFound'), 15_000, 'namespace gone');
  });

  it('refuses to delete the namespaces the system lives in, and publishes the cluster CA in every namespace', async () => {
    const refused = await s.kubectl(['delete', 'namespace', 'kube-system']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Error from server \(Forbidden\): namespaces "kube-system" is forbidden: this namespace may not be deleted/);
    assert.match((await s.kubectl(['delete', 'namespace', 'default'])).stderr, /this namespace may not be deleted/);
    await s.k(['create', 'namespace', 'fresh']);
    const ca = readFileSync(join(s.dataDir, 'tls', 'ca.crt'), 'utf8');
    await eventually(async () => (await s.kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', 'fresh', '-o', 'jsonpath={.data.ca\\.crt}'])).stdout === ca, 10_000, 'kube-root-ca.crt in a new namespace');
    await s.k(['delete', 'configmap', 'kube-root-ca.crt', '-n', 'fresh']);
    await eventually(async () => (await s.kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', 'fresh', '-o', 'jsonpath={.data.ca\\.crt}'])).stdout === ca, 10_000, 'kube-root-ca.crt back after a delete');
  });

  it('answers a path it does not serve as upstream does, so kubectl debug explains instead of crashing', async () => {
    await s.k(['run', 'debug-me', '--image=busybox', '--command', '--', 'sleep', '3600']);
    const debug = await s.kubectl(['debug', 'debug-me', '--image=busybox']);
    assert.equal(debug.code, 1);
    assert.doesNotMatch(debug.stderr, /panic/);
    assert.match(debug.stderr, /ephemeral containers are disabled for this cluster/);
    await s.k(['delete', 'pod', 'debug-me', '--grace-period=0', '--force']);
  });

  it('streams live changes with get -w', async () => {
    const child = spawn(kubectlBinary(), ['--kubeconfig', s.kubeconfig, '--cache-dir', s.cacheDir, 'get', 'cm', '-w', '--output-watch-events'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    try {
      await eventually(() => out.includes('solo'), 10_000, 'initial list');
      await s.k(['create', 'configmap', 'watched', '--from-literal=a=b']);
      await eventually(() => /ADDED\s+watched/.test(out), 10_000, 'ADDED event');
      await s.k(['delete', 'configmap', 'watched']);
      await eventually(() => /DELETED\s+watched/.test(out), 10_000, 'DELETED event');
    } finally {
      child.kill();
    }
  });

  it('explains built-in kinds from the published schemas, field by field', async () => {
    for (const version of [undefined, '1.27', '1.33']) {
      const ports = await s.k(['explain', 'pod.spec.containers.ports'], version ? { version } : {});
      assert.match(ports, /^KIND:\s+Pod$/m);
      assert.match(ports, /FIELD: ports <\[\]ContainerPort>/);
      assert.match(ports, /^\s+containerPort\s+<integer>$/m);
      assert.match(ports, /^\s+protocol\s+<string>$/m);
      const spec = await s.k(['explain', 'deployments.spec', '--recursive'], version ? { version } : {});
      assert.match(spec, /^GROUP:\s+apps$/m);
      assert.match(spec, /^\s+strategy\s+<DeploymentStrategy>\n\s+rollingUpdate\s+<RollingUpdateDeployment>\n\s+maxSurge\s+</m);
      // The Swagger 2.0 document (protobuf) carries the same definitions.
      const v2 = await s.k(['explain', 'pods.spec.containers', '--output', 'plaintext-openapiv2'], version ? { version } : {});
      assert.match(v2, /RESOURCE: containers <\[\]Object>/);
      assert.match(v2, /^\s+imagePullPolicy\s+<string>$/m);
    }
  });
});
