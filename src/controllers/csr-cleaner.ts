// CSR cleaner (upstream's csrcleaner): deletes CertificateSigningRequests that are done with —
// approved and issued, denied or failed for an hour, pending for a day, or whose certificate has
// expired. Each request is looked at again when its next deadline comes, on the injected clock.
import { X509Certificate } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import { certificatePem, conditionsOf, type CertificateSigningRequest } from '../api/kinds/certificatesigningrequest.js';
import { timestampMs } from '../api/kinds/printing.js';
import type { Informer } from '../client/informer.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { ReconcileLoop, type ReconcileResult, type Reconciler } from '../controller-kit/reconciler.js';
import { CSR_PATH } from './csr-signing.js';

const HOUR = 3_600_000;
/** Upstream's approvedExpiration, deniedExpiration and failedExpiration. */
export const DONE_EXPIRATION_MS = HOUR;
/** Upstream's pendingExpiration. */
export const PENDING_EXPIRATION_MS = 24 * HOUR;

/** When a request may be deleted (ms since epoch), and why; undefined when nothing will make it so. */
export function cleanupDeadline(csr: CertificateSigningRequest): { at: number; why: string } | undefined {
  const deadlines: { at: number; why: string }[] = [];
  const conditions = conditionsOf(csr);
  const certificate = certificatePem(csr);
  if (conditions.length === 0) {
    const created = timestampMs(csr.metadata.creationTimestamp);
    if (created !== undefined) deadlines.push({ at: created + PENDING_EXPIRATION_MS, why: 'pending for more than 24h' });
  }
  for (const c of conditions) {
    const updated = timestampMs(c.lastUpdateTime);
    if (c.type === 'Denied' && updated !== undefined) deadlines.push({ at: updated + DONE_EXPIRATION_MS, why: 'denied more than 1h ago' });
    if (c.type === 'Failed' && updated !== undefined) deadlines.push({ at: updated + DONE_EXPIRATION_MS, why: 'failed more than 1h ago' });
    if (c.type === 'Approved' && certificate !== '') {
      if (updated !== undefined) deadlines.push({ at: updated + DONE_EXPIRATION_MS, why: 'issued more than 1h ago' });
      try {
        deadlines.push({ at: Date.parse(new X509Certificate(certificate).validTo), why: 'its certificate has expired' });
      } catch {
        /* not a certificate the cleaner can read: the other deadlines stand */
      }
    }
  }
  return deadlines.sort((a, b) => a.at - b.at)[0];
}

export class CsrCleanerController implements Controller {
  readonly name = 'csrcleaner';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const csrs = ctx.informers.for<CertificateSigningRequest>(CSR_PATH);
    const loop = new ReconcileLoop(new CleanCsr(ctx, csrs), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    csrs.addHandlers({ add: (o) => loop.enqueue(o.metadata.name!), update: (_o, o) => loop.enqueue(o.metadata.name!) });
    void csrs.waitForSync().then(() => loop.run(signal));
  }
}

class CleanCsr implements Reconciler {
  readonly name = 'csrcleaner';

  constructor(
    private readonly ctx: ControllerContext,
    private readonly csrs: Informer<CertificateSigningRequest>,
  ) {}

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const csr = this.csrs.get(name);
    if (!csr) return;
    const deadline = cleanupDeadline(csr);
    if (!deadline) return;
    const now = this.ctx.clock.now();
    if (deadline.at > now) return { requeueAfterMs: deadline.at - now };
    try {
      await this.ctx.client.delete(`${CSR_PATH}/${encodeURIComponent(name)}`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: csr.metadata.uid } }, { signal });
      this.ctx.log.info({ csr: name, why: deadline.why }, 'certificate signing request cleaned up');
    } catch (e) {
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}
