// The plain limit kube-apiserver applies when Priority and Fairness is turned off
// (--enable-priority-and-fairness=false): at most --max-requests-inflight reads and
// --max-mutating-requests-inflight writes at once, the rest answered 429 at once. system:masters
// is never limited, so an administrator can still reach an overloaded server.
import { tooManyRequests } from '../../api/errors.js';
import type { UserInfo } from '../../auth/user.js';
import type { RequestInfo } from '../http/request-info.js';
import type { Release } from './queue-set.js';

const READ_VERBS = new Set(['get', 'list', 'watch']);

export class MaxInFlight {
  private readOnly = 0;
  private mutating = 0;

  constructor(private readonly maxReadOnly: number, private readonly maxMutating: number) {}

  /** Frees the slot when called; throws the 429 to answer when none is free. */
  enter(user: UserInfo, info: RequestInfo): Release | undefined {
    if (user.groups.includes('system:masters')) return undefined;
    const read = info.kind === 'resource' ? READ_VERBS.has(info.verb) : info.verb === 'get' || info.verb === 'head';
    const limit = read ? this.maxReadOnly : this.maxMutating;
    if (limit <= 0) return undefined;
    if ((read ? this.readOnly : this.mutating) >= limit) throw tooManyRequests('Too many requests, please try again later.', undefined, 1);
    if (read) this.readOnly++;
    else this.mutating++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (read) this.readOnly--;
      else this.mutating--;
    };
  }
}
