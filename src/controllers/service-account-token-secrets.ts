// Legacy service-account token Secrets (upstream's serviceaccount-token controller): a Secret of
// type kubernetes.io/service-account-token naming an account in its
// kubernetes.io/service-account.name annotation gets a token that never expires, the cluster CA and
// the namespace, as guides for long-lived tokens (CI systems, dashboards) expect. The token stays
// valid while the Secret holds it and the account is the one it was made for.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import { obj, str } from '../api/kinds/json.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { signLegacyToken } from '../auth/service-account-tokens.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { PATHS } from '../controller-kit/informers.js';
import { objectPath } from './pod-control.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const UID_ANNOTATION = 'kubernetes.io/service-account.uid';

export class ServiceAccountTokenSecretsController implements Controller {
  readonly name = 'serviceaccount-token';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    // A controller manager without the signing key (unit tests) has no tokens to give.
    const key = ctx.options.serviceAccountKeyPem;
    if (!key) return;
    setMaxListeners(0, signal);
    const secrets = ctx.informers.for<KubeObject>(PATHS.secrets, { fieldSelector: `type=${SERVICE_ACCOUNT_TOKEN_TYPE}` });
    const accounts = ctx.informers.for<KubeObject>(PATHS.serviceaccounts);
    const loop = new ReconcileLoop(new FillTokenSecret(ctx, key, secrets, accounts), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    const enqueue = (s: KubeObject) => loop.enqueue(objectKeyOf(s));
    secrets.addHandlers({ add: enqueue, update: (_o, s) => enqueue(s) });
    // A Secret may come before its account: the account's arrival fills it.
    const accountChanged = (sa: KubeObject) => {
      for (const s of secrets.list()) if (s.metadata.namespace === sa.metadata.namespace && s.metadata.annotations?.[NAME_ANNOTATION] === sa.metadata.name) enqueue(s);
    };
    accounts.addHandlers({ add: accountChanged, update: (_o, sa) => accountChanged(sa) });
    void Promise.all([secrets.waitForSync(), accounts.waitForSync()]).then(() => loop.run(signal));
  }
}

class FillTokenSecret implements Reconciler {
  readonly name = 'serviceaccount-token';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly key: string,
    private readonly secrets: Informer<KubeObject>,
    private readonly accounts: Informer<KubeObject>,
  ) {}

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const secret = this.secrets.get(key);
    if (!secret || secret.metadata.deletionTimestamp || secret['type'] !== SERVICE_ACCOUNT_TOKEN_TYPE) return;
    const ns = secret.metadata.namespace!;
    const saName = secret.metadata.annotations?.[NAME_ANNOTATION];
    if (!saName) return;
    const account = this.accounts.get(`${ns}/${saName}`);
    if (!account) return;
    const uid = account.metadata.uid!;
    const pinned = secret.metadata.annotations?.[UID_ANNOTATION];
    // Made for an earlier account of the same name: it stays as it is, and its token is refused.
    if (pinned && pinned !== uid) return;
    const data = obj(secret['data']);
    if (str(data.token) && str(data['ca.crt']) && str(data.namespace) && pinned) return;
    const token = await signLegacyToken(this.key, { namespace: ns, serviceAccount: { name: saName, uid }, secretName: secret.metadata.name! });
    const b64 = (v: string) => Buffer.from(v, 'utf8').toString('base64');
    const patch = {
      metadata: { resourceVersion: secret.metadata.resourceVersion, annotations: { [UID_ANNOTATION]: uid } },
      data: { token: str(data.token) || b64(token), 'ca.crt': b64(this.ctx.options.rootCaPem ?? ''), namespace: b64(ns) },
    };
    try {
      await this.ctx.client.patch(objectPath('/api/v1', 'secrets', ns, secret.metadata.name!), patch, 'merge', { signal });
      this.ctx.log.info({ secret: key, serviceaccount: saName }, 'service-account token written to its Secret');
    } catch (e) {
      if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
    }
  }
}
