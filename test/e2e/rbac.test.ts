// RBAC as a kubectl user meets it: bootstrap roles, bindings that grant exactly their roles' rules,
// no escalation through Roles or bindings, and service-account tokens from `kubectl create token`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { TestServer } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

interface Out {
  code: number;
  out: string;
}

describe('RBAC and service-account tokens', () => {
  const s = new TestServer('rbac');
  let server = '';
  let caFile = '';
  /** kubectl as admin impersonating someone: `as('jane', 'get', 'pods')`. */
  const as = async (user: string, ...args: string[]): Promise<Out> => {
    const [name, ...groups] = user.split('+');
    const r = await s.kubectl([`--as=${name}`, ...groups.map((g) => `--as-group=${g}`), ...args]);
    return { code: r.code, out: r.stdout + r.stderr };
  };
  /** kubectl with nothing but a bearer token. */
  const withToken = (token: string, ...args: string[]): Promise<Out> =>
    new Promise((resolve) =>
      execFile('kubectl', ['--kubeconfig', '/dev/null', '--server', server, '--certificate-authority', caFile, '--token', token, ...args], (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, out: stdout + stderr }),
      ),
    );
  const canI = async (user: string, ...args: string[]): Promise<string> => (await as(user, 'auth', 'can-i', ...args)).out.trim().split('\n').pop()!;

  before(async () => {
    await s.start();
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    server = kc.server;
    caFile = join(s.dataDir, 'ca-rbac.pem');
    writeFileSync(caFile, kc.caPem!);
    for (const ns of ['team-a', 'team-b']) await s.k(['create', 'namespace', ns]);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('starts with upstream bootstrap roles; admin, edit and view are aggregated and grow with aggregate-to-* roles', async () => {
    const roles = await s.k(['get', 'clusterroles', '-o', 'name']);
    for (const r of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer']) assert.match(roles, new RegExp(`^clusterrole.rbac.authorization.k8s.io/${r}$`, 'm'));
    assert.match(await s.k(['get', 'clusterrolebinding', 'cluster-admin', '-o', 'wide']), /ClusterRole\/cluster-admin\s+\S+\s+system:masters/);
    // view gathers system:aggregate-to-view; edit gathers view; admin gathers edit.
    const ruleCount = async (role: string) => (JSON.parse(await s.k(['get', 'clusterrole', role, '-o', 'json'])) as { rules?: unknown[] }).rules?.length ?? 0;
    await eventually(async () => (await ruleCount('admin')) > (await ruleCount('edit')) && (await ruleCount('edit')) > (await ruleCount('view')) && (await ruleCount('view')) > 0, 15_000, 'admin > edit > view > 0 rules');
    await s.k(['create', 'rolebinding', 'viewer', '--clusterrole=view', '--user=vic', '-n', 'team-a']);
    assert.equal(await canI('vic', 'list', 'pods', '-n', 'team-a'), 'yes');
    assert.equal(await canI('vic', 'list', 'leases.coordination.k8s.io', '-n', 'team-a'), 'no');
    // A chart's role labelled aggregate-to-view adds its rules to view, for everyone bound to view.
    const extra = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'leases-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch'] }] };
    await s.k(['apply', '-f', '-'], { input: stringifyYaml(extra) });
    await eventually(async () => (await canI('vic', 'list', 'leases.coordination.k8s.io', '-n', 'team-a')) === 'yes', 15_000, 'view aggregates leases-view');
    await eventually(async () => (await canI('vic+system:authenticated', 'list', 'leases.coordination.k8s.io', '-n', 'team-b')) === 'no', 5_000, 'only where bound');
  });

  it('grants exactly what bound roles hold: per namespace, per group, per resource name', async () => {
    const denied = await as('jane', 'get', 'pods', '-n', 'team-a');
    assert.equal(denied.code, 1);
    assert.match(denied.out, /Error from server \(Forbidden\): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "team-a"/);
    await s.k(['create', 'rolebinding', 'jane-view', '--clusterrole=view', '--user=jane', '-n', 'team-a']);
    assert.equal((await as('jane', 'get', 'pods', '-n', 'team-a')).code, 0);
    assert.equal(await canI('jane', 'list', 'pods', '-n', 'team-b'), 'no');
    assert.equal(await canI('jane', 'get', 'secrets', '-n', 'team-a'), 'no', 'view leaves out secrets');
    const write = await as('jane', 'create', 'configmap', 'nope', '-n', 'team-a');
    assert.equal(write.code, 1);
    assert.match(write.out, /configmaps is forbidden: User "jane" cannot create resource "configmaps" in API group "" in the namespace "team-a"/);
    // A group bound cluster-wide reads every namespace; API groups are named in refusals.
    await s.k(['create', 'clusterrolebinding', 'auditors', '--clusterrole=view', '--group=auditors']);
    assert.equal((await as('bob+auditors', 'get', 'pods', '--all-namespaces')).code, 0);
    const rb = await as('bob', 'get', 'deployments', '-n', 'team-b');
    assert.match(rb.out, /deployments\.apps is forbidden: User "bob" cannot list resource "deployments" in API group "apps" in the namespace "team-b"/);
    // resourceNames: one ConfigMap by name, not the others, and no list.
    for (const n of ['one', 'two']) await s.k(['create', 'configmap', n, '-n', 'team-b', '--from-literal=k=v']);
    await s.k(['create', 'role', 'one-cm', '--verb=get,list,watch', '--resource=configmaps', '--resource-name=one', '-n', 'team-b']);
    await s.k(['create', 'rolebinding', 'one-cm', '--role=one-cm', '--user=carl', '-n', 'team-b']);
    assert.equal((await as('carl', 'get', 'configmap', 'one', '-n', 'team-b')).code, 0);
    assert.equal((await as('carl', 'get', 'configmap', 'two', '-n', 'team-b')).code, 1);
    assert.equal((await as('carl', 'get', 'configmaps', '-n', 'team-b')).code, 1);
    // A list narrowed to one name by a field selector is a read of that object (kubectl get -w, wait, informers of one object).
    assert.equal((await as('carl', 'get', 'configmaps', '-n', 'team-b', '--field-selector', 'metadata.name=one')).code, 0);
    assert.match((await as('carl', 'get', 'configmaps', '-n', 'team-b', '--field-selector', 'metadata.name=two')).out, /configmaps "two" is forbidden: User "carl" cannot list resource "configmaps"/);
    // A Namespace is in itself: a RoleBinding there may grant reading it.
    assert.equal((await as('jane', 'get', 'namespace', 'team-a')).code, 0);
    assert.match((await as('jane', 'get', 'namespace', 'team-b')).out, /namespaces "team-b" is forbidden: User "jane" cannot get resource "namespaces" in API group "" in the namespace "team-b"/);
    // Anonymous is not authenticated: no discovery (system:discovery is for authenticated users).
    assert.match((await as('system:anonymous', 'get', '--raw', '/api')).out, /forbidden: User "system:anonymous" cannot get path "\/api"/);
    // Subresources are resources of their own: deployments/scale without deployments.
    await s.k(['create', 'deployment', 'web', '--image=busybox', '-n', 'team-b', '--', 'sleep', '3600']);
    const scaler = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'scaler', namespace: 'team-b' }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }, { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['patch'] }] };
    await s.k(['apply', '-f', '-'], { input: stringifyYaml(scaler) });
    await s.k(['create', 'rolebinding', 'scaler', '--role=scaler', '--user=sam', '-n', 'team-b']);
    const scaled = await as('sam', 'scale', 'deployment', 'web', '--replicas=0', '-n', 'team-b');
    assert.equal(scaled.code, 0, scaled.out);
    assert.equal((await as('sam', 'delete', 'deployment', 'web', '-n', 'team-b')).code, 1);
    // `auth can-i --list` lists what the bindings grant.
    const list = await as('carl', 'auth', 'can-i', '--list', '-n', 'team-b');
    assert.match(list.out, /^configmaps\s+\[\]\s+\[one\]\s+\[get list watch\]$/m);
    // Everyone authenticated may discover the API.
    assert.equal((await as('nobody', 'api-resources', '-o', 'name')).code, 0);
  });

  it('refuses escalation: Roles and bindings may grant only what the writer holds, unless allowed to escalate or bind', async () => {
    await s.k(['create', 'rolebinding', 'lead-admin', '--clusterrole=admin', '--user=lead', '-n', 'team-a']);
    // A namespace admin hands out edit (which admin holds) in that namespace...
    assert.equal((await as('lead', 'create', 'rolebinding', 'dev-edit', '--clusterrole=edit', '--user=dev', '-n', 'team-a')).code, 0);
    assert.equal(await canI('dev', 'create', 'deployments', '-n', 'team-a'), 'yes');
    // ...but not cluster-admin, and no Role with rules it does not hold.
    const esc = await as('lead', 'create', 'rolebinding', 'grab', '--clusterrole=cluster-admin', '--user=lead', '-n', 'team-a');
    assert.equal(esc.code, 1);
    assert.match(esc.out, /rolebindings\.rbac\.authorization\.k8s\.io "grab" is forbidden: user "lead" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/);
    const role = await as('lead', 'create', 'role', 'nodes', '--verb=get', '--resource=nodes', '-n', 'team-a');
    assert.equal(role.code, 1);
    assert.match(role.out, /roles\.rbac\.authorization\.k8s\.io "nodes" is forbidden: .*not currently held:\n\{APIGroups:\[""\], Resources:\["nodes"\], Verbs:\["get"\]\}/);
    assert.equal((await as('lead', 'create', 'role', 'pods', '--verb=get', '--resource=pods', '-n', 'team-a')).code, 0, 'rules it holds');
    assert.equal((await as('lead', 'create', 'rolebinding', 'elsewhere', '--clusterrole=view', '--user=lead', '-n', 'team-b')).code, 1, 'not outside its namespace');
    // The bind verb on a role lets a user bind it without holding it.
    await s.k(['create', 'clusterrole', 'bind-admin', '--verb=bind', '--resource=clusterroles', '--resource-name=cluster-admin']);
    await s.k(['create', 'rolebinding', 'lead-bind', '--clusterrole=bind-admin', '--user=lead', '-n', 'team-a']);
    assert.equal((await as('lead', 'create', 'rolebinding', 'grab', '--clusterrole=cluster-admin', '--user=ops', '-n', 'team-a')).code, 0);
    // A binding to a role that does not exist, by someone who could not bind it: the role is not found.
    const missing = await as('lead', 'create', 'rolebinding', 'ghost', '--role=ghost', '--user=x', '-n', 'team-a');
    assert.match(missing.out, /roles\.rbac\.authorization\.k8s\.io "ghost" not found/);
  });

  it('issues service-account tokens (kubectl create token) that authenticate as the account until it or their bound pod is gone', async () => {
    await s.k(['create', 'serviceaccount', 'ci', '-n', 'team-b']);
    const token = (await s.k(['create', 'token', 'ci', '-n', 'team-b'])).trim();
    assert.match(token, /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    const who = await withToken(token, 'auth', 'whoami');
    assert.equal(who.code, 0, who.out);
    assert.match(who.out, /Username\s+system:serviceaccount:team-b:ci/);
    assert.match(who.out, /Groups\s+\[system:serviceaccounts system:serviceaccounts:team-b system:authenticated\]/);
    const before = await withToken(token, 'create', 'configmap', 'from-ci', '-n', 'team-b');
    assert.match(before.out, /User "system:serviceaccount:team-b:ci" cannot create resource "configmaps"/);
    await s.k(['create', 'rolebinding', 'ci-edit', '--clusterrole=edit', '--serviceaccount=team-b:ci', '-n', 'team-b']);
    assert.equal((await withToken(token, 'create', 'configmap', 'from-ci', '-n', 'team-b')).code, 0);
    assert.equal((await withToken(token, 'get', 'configmaps', '-n', 'team-a')).code, 1);
    // Upstream's limits on the request.
    const short = await s.kubectl(['create', 'token', 'ci', '-n', 'team-b', '--duration=5m']);
    assert.match(short.stderr, /spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/);
    assert.match((await s.kubectl(['create', 'token', 'nobody', '-n', 'team-b'])).stderr, /serviceaccounts "nobody" not found/);
    // Bound to a pod: valid while that pod lives.
    await s.k(['run', 'holder', '--image=busybox', '-n', 'team-b', '--restart=Never', '--command', '--', 'sleep', '3600']);
    // ServiceAccount admission: a pod may only run as an account that exists...
    const missing = await s.kubectl(['run', 'nosa', '--image=busybox', '-n', 'team-b', '--overrides={"spec":{"serviceAccountName":"nosuch"}}', '--command', '--', 'sleep', '1']);
    assert.match(missing.stderr, /pods "nosa" is forbidden: error looking up service account team-b\/nosuch: serviceaccount "nosuch" not found/);
    // ...and one that names no account runs as its namespace's default one.
    assert.equal(await s.k(['get', 'pod', 'holder', '-n', 'team-b', '-o', 'jsonpath={.spec.serviceAccountName}/{.spec.serviceAccount}']), 'default/default');
    const bound = (await s.k(['create', 'token', 'ci', '-n', 'team-b', '--bound-object-kind=Pod', '--bound-object-name=holder'])).trim();
    assert.equal((await withToken(bound, 'get', 'configmaps', '-n', 'team-b')).code, 0);
    await s.k(['delete', 'pod', 'holder', '-n', 'team-b', '--grace-period=0', '--force']);
    await eventually(async () => /Unauthorized/.test((await withToken(bound, 'get', 'configmaps', '-n', 'team-b')).out), 10_000, 'bound token refused once its pod is gone');
    // The account deleted and created again is another account: old tokens stop working.
    await s.k(['delete', 'serviceaccount', 'ci', '-n', 'team-b']);
    await s.k(['create', 'serviceaccount', 'ci', '-n', 'team-b']);
    await eventually(async () => /Unauthorized/.test((await withToken(token, 'get', 'configmaps', '-n', 'team-b')).out), 10_000, 'token of the deleted account refused');
    // A legacy token Secret gets a token that never expires, the CA and the namespace; it works while the Secret holds it.
    const legacy = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'ci-token', namespace: 'team-b', annotations: { 'kubernetes.io/service-account.name': 'ci' } } };
    await s.k(['apply', '-f', '-'], { input: JSON.stringify(legacy) });
    const secretToken = await eventually(async () => {
      const sec = JSON.parse(await s.k(['get', 'secret', 'ci-token', '-n', 'team-b', '-o', 'json'])) as { data?: Record<string, string>; metadata: { annotations?: Record<string, string> } };
      return sec.data?.token && sec.data['ca.crt'] && sec.data.namespace && sec.metadata.annotations?.['kubernetes.io/service-account.uid'] ? Buffer.from(sec.data.token, 'base64').toString() : undefined;
    }, 15_000, 'token written into the Secret');
    assert.match((await withToken(secretToken, 'auth', 'whoami')).out, /Username\s+system:serviceaccount:team-b:ci/);
    await s.k(['delete', 'secret', 'ci-token', '-n', 'team-b']);
    await eventually(async () => /Unauthorized/.test((await withToken(secretToken, 'auth', 'whoami')).out), 10_000, 'legacy token refused once its Secret is gone');
    // A token signed by anyone else is refused.
    const [h, p] = token.split('.');
    assert.match((await withToken(`${h}.${p}.${Buffer.alloc(64).toString('base64url')}`, 'get', 'pods')).out, /Unauthorized/);
  });
  it('answers TokenReview and (Local)SubjectAccessReview for components that delegate to the API server', async () => {
    await s.k(['create', 'serviceaccount', 'probe', '-n', 'team-a']);
    const token = (await s.k(['create', 'token', 'probe', '-n', 'team-a'])).trim();
    const create = async (obj: Record<string, unknown>, ...args: string[]) => JSON.parse(await s.k(['create', '-f', '-', '-o', 'json', ...args], { input: JSON.stringify(obj) })) as { status: Record<string, unknown> };
    const review = await create({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    assert.equal(review.status.authenticated, true);
    assert.equal((review.status.user as { username: string }).username, 'system:serviceaccount:team-a:probe');
    assert.equal((await create({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: `${token}x` } })).status.authenticated, false);
    // jane has view in team-a only.
    const sar = (ns: string) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'jane', resourceAttributes: { verb: 'list', resource: 'pods', namespace: ns } } });
    assert.equal((await create(sar('team-a'))).status.allowed, true);
    assert.equal((await create(sar('team-b'))).status.allowed, false);
    const local = { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'team-a' }, spec: { user: 'jane', resourceAttributes: { verb: 'get', resource: 'pods' } } };
    assert.equal((await create(local, '-n', 'team-a')).status.allowed, true);
    // Asking needs system:auth-delegator (or more); the account alone may not.
    const tokenReview = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    // --validate=false: kubectl looks a kind without a PATCH (TokenReview) up among the CRDs before it
    // leaves validation to the server, as against kube-apiserver, and this account may not list them.
    const asProbe = ['create', '-f', '-', '--validate=false', '--as=system:serviceaccount:team-a:probe'];
    const refused = await s.kubectl(asProbe, { input: tokenReview });
    assert.match(refused.stderr, /tokenreviews\.authentication\.k8s\.io is forbidden: User "system:serviceaccount:team-a:probe" cannot create resource "tokenreviews"/);
    await s.k(['create', 'clusterrolebinding', 'probe-delegator', '--clusterrole=system:auth-delegator', '--serviceaccount=team-a:probe']);
    assert.equal((await s.kubectl(asProbe, { input: tokenReview })).code, 0);
  });
});
