// A storage outage as the log tells it: one line when requests start failing for want of storage
// (etcd without quorum, a full or read-only disk), one when the reason changes, and one when a
// write succeeds again with how many requests failed meanwhile, not one line per request.
import type { Logger } from '../util/log.js';

/**
 * What a failure says apart from its particulars: etcd's messages name the operation, the member
 * and the milliseconds waited, which differ on every request of one outage.
 */
function causeOf(reason: string): string {
  return reason
    .replace(/^etcd: \S+/, 'etcd:')
    .replace(/\b[a-z]+:\/\/\S+/gi, 'URL')
    .replace(/\d+(\.\d+)?/g, 'N');
}

export class StorageOutageLog {
  private reason: string | undefined;
  private failed = 0;

  constructor(private readonly log: Logger) {}

  failure(reason: string, method: string | undefined, url: string | undefined): void {
    this.failed++;
    const cause = causeOf(reason);
    if (cause === this.reason) return;
    this.reason = cause;
    this.log.warn({ err: reason, method, url }, 'requests failing: storage unavailable');
  }

  /** A write was acknowledged: storage takes writes again. */
  writeSucceeded(): void {
    if (this.reason === undefined) return;
    this.log.info({ failedRequests: this.failed, was: this.reason }, 'storage available again');
    this.reason = undefined;
    this.failed = 0;
  }
}
