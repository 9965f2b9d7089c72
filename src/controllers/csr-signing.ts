// CSR signing (upstream's csrsigning): issues certificates for approved CertificateSigningRequests
// of the built-in signers (kube-apiserver-client, kube-apiserver-client-kubelet, kubelet-serving)
// from the cluster CA. A request its signer will not honour gets a Failed condition
// (SignerValidationFailure) instead; other signers' requests are left to their own signers.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import { BUILT_IN_SIGNERS } from '../api/certificate-signers.js';
import { CERTIFICATES_GROUP, checkedRequest, hasCondition, requestPem, type CertificateSigningRequest } from '../api/kinds/certificatesigningrequest.js';
import { arr, obj, optNum, str } from '../api/kinds/json.js';
import { resourcePath } from '../api/paths.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type Reconciler } from '../controller-kit/reconciler.js';
import { signForRequest } from '../pki/certificates.js';
import { rfc3339 } from '../util/time.js';

export const CSR_PATH = resourcePath(CERTIFICATES_GROUP, 'certificatesigningrequests');
/** kube-controller-manager's --cluster-signing-duration default. */
export const DEFAULT_CLUSTER_SIGNING_DURATION_MS = 365 * 86_400_000;
/** Twice the backdating: the shortest certificate a signer issues, whatever is asked. */
const MIN_DURATION_MS = 10 * 60_000;

/** Upstream's signer.duration: what was asked, within [10 min, --cluster-signing-duration]. */
export function certificateDurationMs(expirationSeconds: number | undefined, maxMs: number): number {
  if (expirationSeconds === undefined) return maxMs;
  return Math.max(MIN_DURATION_MS, Math.min(maxMs, expirationSeconds * 1000));
}

export class CsrSigningController implements Controller {
  readonly name = 'csrsigning';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    const ca = ctx.options.clusterSigningCa;
    // A controller manager without the CA's key (unit tests) signs nothing.
    if (!ca) return;
    setMaxListeners(0, signal);
    const csrs = ctx.informers.for<CertificateSigningRequest>(CSR_PATH);
    const loop = new ReconcileLoop(new SignCsr(ctx, ca, csrs), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    csrs.addHandlers({ add: (o) => loop.enqueue(o.metadata.name!), update: (_o, o) => loop.enqueue(o.metadata.name!) });
    void csrs.waitForSync().then(() => loop.run(signal));
  }
}

class SignCsr implements Reconciler {
  readonly name = 'csrsigning';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly ca: { certPem: string; keyPem: string },
    private readonly csrs: Informer<CertificateSigningRequest>,
  ) {}

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const csr = this.csrs.get(name);
    if (!csr || !hasCondition(csr, 'Approved') || hasCondition(csr, 'Failed') || str(obj(csr.status).certificate) !== '') return;
    const check = BUILT_IN_SIGNERS.get(csr.spec.signerName);
    if (!check) return;
    const req = checkedRequest(csr);
    if (typeof req === 'string') throw new Error(`unable to parse csr ${JSON.stringify(name)}: ${req}`);
    const usages = arr(csr.spec.usages).map(str);
    const problem = check(req, usages);
    const status = { ...obj(csr.status) } as Record<string, unknown>;
    if (problem) {
      const failed = { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem, lastUpdateTime: rfc3339(this.ctx.clock.now()) };
      status.conditions = [...arr(status.conditions), failed];
      this.ctx.log.info({ csr: name, signer: csr.spec.signerName, reason: problem }, 'certificate signing request failed its signer\'s checks');
    } else {
      const maxMs = this.ctx.options.clusterSigningDurationMs ?? DEFAULT_CLUSTER_SIGNING_DURATION_MS;
      const ttlMs = certificateDurationMs(optNum(csr.spec.expirationSeconds), maxMs);
      const pem = await signForRequest(this.ca, requestPem(csr), { usages, ttlMs, now: this.ctx.clock.now() });
      status.certificate = Buffer.from(pem, 'latin1').toString('base64');
      this.ctx.log.info({ csr: name, signer: csr.spec.signerName, subject: req.commonName }, 'certificate issued');
    }
    try {
      await this.ctx.client.replace(`${CSR_PATH}/${encodeURIComponent(name)}/status`, { ...csr, status }, { signal });
    } catch (e) {
      // A newer version is on its way through the informer, or the request is gone.
      if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
    }
  }
}
