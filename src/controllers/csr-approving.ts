// CSR approving (upstream's csrapproving): approves a node's client certificate request when its
// requester may, by a SubjectAccessReview of the requester's own rights: `create` on
// certificatesigningrequests/selfnodeclient for a node renewing its own certificate,
// certificatesigningrequests/nodeclient for a first one (a bootstrap token's). Anything else
// waits for a person (`kubectl certificate approve`).
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import { kubeletClientProblem } from '../api/certificate-signers.js';
import { CERTIFICATES_GROUP, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, checkedRequest, conditionsOf, type CertificateSigningRequest } from '../api/kinds/certificatesigningrequest.js';
import { arr, obj, str } from '../api/kinds/json.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type ReconcileResult, type Reconciler } from '../controller-kit/reconciler.js';
import { CSR_PATH } from './csr-signing.js';

/** How soon a request whose requester lacked the right is looked at again (a binding may be added). */
const RETRY_MS = 30_000;

interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  message: string;
  recognize(csr: CertificateSigningRequest, commonName: string): boolean;
}

const RECOGNIZERS: readonly Recognizer[] = [
  {
    subresource: 'selfnodeclient',
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    recognize: (csr, cn) => csr.spec.username === cn,
  },
  { subresource: 'nodeclient', message: 'Auto approving kubelet client certificate after SubjectAccessReview.', recognize: () => true },
];

export class CsrApprovingController implements Controller {
  readonly name = 'csrapproving';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const csrs = ctx.informers.for<CertificateSigningRequest>(CSR_PATH);
    const loop = new ReconcileLoop(new ApproveCsr(ctx, csrs), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    csrs.addHandlers({ add: (o) => loop.enqueue(o.metadata.name!), update: (_o, o) => loop.enqueue(o.metadata.name!) });
    void csrs.waitForSync().then(() => loop.run(signal));
  }
}

class ApproveCsr implements Reconciler {
  readonly name = 'csrapproving';
  /** Requests already said to lack the right, so a retry does not log again. */
  private readonly refused = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly csrs: Informer<CertificateSigningRequest>,
  ) {}

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const csr = this.csrs.get(name);
    if (!csr || str(obj(csr.status).certificate) !== '' || conditionsOf(csr).some((c) => c.type === 'Approved' || c.type === 'Denied')) {
      this.refused.delete(name);
      return;
    }
    if (csr.spec.signerName !== KUBE_APISERVER_CLIENT_KUBELET_SIGNER) return;
    const req = checkedRequest(csr);
    if (typeof req === 'string') throw new Error(`unable to parse csr ${JSON.stringify(name)}: ${req}`);
    if (kubeletClientProblem(req, arr(csr.spec.usages).map(str)) !== undefined) return;
    const tried: string[] = [];
    for (const r of RECOGNIZERS) {
      if (!r.recognize(csr, req.commonName)) continue;
      tried.push(r.subresource);
      if (!(await this.allowed(csr, r.subresource, signal))) continue;
      const approved = { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message };
      try {
        await this.ctx.client.replace(`${CSR_PATH}/${encodeURIComponent(name)}/approval`, { ...csr, status: { ...obj(csr.status), conditions: [...conditionsOf(csr), approved] } }, { signal });
        this.ctx.log.info({ csr: name, requester: csr.spec.username, as: r.subresource }, 'certificate signing request approved');
      } catch (e) {
        if (!isStatusError(e, 'Conflict') && !isStatusError(e, 'NotFound')) throw e;
      }
      this.refused.delete(name);
      return;
    }
    if (!this.refused.has(name)) {
      this.refused.add(name);
      this.ctx.log.info({ csr: name, requester: csr.spec.username, tried }, 'recognized as a node client certificate request, but the requester may not have it approved');
    }
    return { requeueAfterMs: RETRY_MS };
  }

  /** A SubjectAccessReview for the requester, as the request recorded them. */
  private async allowed(csr: CertificateSigningRequest, subresource: string, signal: AbortSignal): Promise<boolean> {
    const review = await this.ctx.client.create<{ status?: { allowed?: boolean } }>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: csr.spec.username,
          ...(csr.spec.uid ? { uid: csr.spec.uid } : {}),
          groups: csr.spec.groups ?? [],
          ...(csr.spec.extra ? { extra: csr.spec.extra } : {}),
          resourceAttributes: { group: CERTIFICATES_GROUP, resource: 'certificatesigningrequests', verb: 'create', subresource, version: '*' },
        },
      },
      { signal },
    );
    return review.status?.allowed === true;
  }
}
