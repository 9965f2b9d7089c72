import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceAccountTokens, signLegacyToken, type TokenObjects } from '../../src/auth/service-account-tokens.js';
import { createSigningKey } from '../../src/pki/certificates.js';
import { FakeClock } from '../../src/util/clock.js';
import type { KubeObject } from '../../src/api/types.js';

describe('service-account tokens', () => {
  const live = new Map<string, KubeObject>();
  const put = (kind: string, ns: string, name: string, uid: string) => live.set(`${kind}/${ns}/${name}`, { metadata: { name, namespace: ns, uid } });
  const objects: TokenObjects = { get: async (kind, ns, name) => live.get(`${kind}/${ns}/${name}`) };
  const ci = { namespace: 'a', serviceAccount: { name: 'ci', uid: 'u1' } };

  it('authenticate as the account, with its groups, until they expire', async () => {
    const clock = new FakeClock();
    const tokens = await ServiceAccountTokens.fromPrivateKey(await createSigningKey(), objects, clock);
    put('ServiceAccount', 'a', 'ci', 'u1');
    const { token, expiresAt } = await tokens.issue(ci, tokens.audiences, 3600);
    assert.equal(expiresAt, clock.now() + 3600_000);
    assert.deepEqual(await tokens.authenticate(token), { name: 'system:serviceaccount:a:ci', groups: ['system:serviceaccounts', 'system:serviceaccounts:a'] });
    await clock.advance(3659_000);
    assert.ok(await tokens.authenticate(token), 'a minute of leeway for clocks that differ');
    await clock.advance(2_000);
    assert.equal(await tokens.authenticate(token), undefined);
  });

  it('refuse tokens for another audience, from another key, tampered with, or not JWTs', async () => {
    const clock = new FakeClock();
    const tokens = await ServiceAccountTokens.fromPrivateKey(await createSigningKey(), objects, clock);
    const other = await ServiceAccountTokens.fromPrivateKey(await createSigningKey(), objects, clock);
    put('ServiceAccount', 'a', 'ci', 'u1');
    assert.equal(await tokens.authenticate((await tokens.issue(ci, ['vault'], 3600)).token), undefined);
    assert.equal(await tokens.authenticate((await other.issue(ci, other.audiences, 3600)).token), undefined);
    const [h, p, sig] = (await tokens.issue(ci, tokens.audiences, 3600)).token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    assert.equal(await tokens.authenticate(`${h}.${forged}.${sig}`), undefined);
    assert.equal(await tokens.authenticate('abcdef.0123456789abcdef'), undefined);
    assert.equal(await tokens.authenticate('eyJnotajwt'), undefined);
  });

  it('stop working when the account is deleted or re-created, or the object they are bound to goes', async () => {
    const clock = new FakeClock();
    const tokens = await ServiceAccountTokens.fromPrivateKey(await createSigningKey(), objects, clock);
    put('ServiceAccount', 'a', 'ci', 'u1');
    put('Pod', 'a', 'p', 'pod-1');
    const plain = (await tokens.issue(ci, tokens.audiences, 3600)).token;
    const bound = (await tokens.issue({ ...ci, bound: { kind: 'Pod', name: 'p', uid: 'pod-1' } }, tokens.audiences, 3600)).token;
    assert.ok(await tokens.authenticate(bound));
    put('Pod', 'a', 'p', 'pod-2');
    assert.equal(await tokens.authenticate(bound), undefined, 'a new pod of the same name is another pod');
    assert.ok(await tokens.authenticate(plain));
    put('ServiceAccount', 'a', 'ci', 'u2');
    assert.equal(await tokens.authenticate(plain), undefined);
    live.delete('ServiceAccount/a/ci');
    assert.equal(await tokens.authenticate(plain), undefined);
  });
  it('accept a legacy token while its Secret holds it and its account is the same one', async () => {
    const clock = new FakeClock();
    const key = await createSigningKey();
    const tokens = await ServiceAccountTokens.fromPrivateKey(key, objects, clock);
    put('ServiceAccount', 'a', 'ci', 'u1');
    const token = await signLegacyToken(key, { namespace: 'a', serviceAccount: { name: 'ci', uid: 'u1' }, secretName: 'ci-token' });
    assert.equal(await tokens.authenticate(token), undefined, 'not yet in its Secret');
    live.set('Secret/a/ci-token', { metadata: { name: 'ci-token', namespace: 'a' }, data: { token: Buffer.from(token).toString('base64') } } as KubeObject);
    assert.deepEqual(await tokens.authenticate(token), { name: 'system:serviceaccount:a:ci', groups: ['system:serviceaccounts', 'system:serviceaccounts:a'] });
    await clock.advance(400 * 86_400_000);
    assert.ok(await tokens.authenticate(token), 'never expires');
    put('ServiceAccount', 'a', 'ci', 'u2');
    assert.equal(await tokens.authenticate(token), undefined);
  });
});
