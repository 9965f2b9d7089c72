// Who may use the agent's kubelet port besides the API server: a caller with a certificate of the
// cluster CA, when the API server's authorizers say its user may use the node subresource the path
// belongs to — a SubjectAccessReview, as the kubelet's webhook authorization asks (`nodes/stats`
// for /stats/..., `nodes/metrics` for /metrics/..., `nodes/proxy` for the rest). Answers are kept
// for a while (allowed 5 minutes, denied 30 seconds: the kubelet's defaults).
import type { Clock } from '../util/clock.js';

export type NodeSubresource = 'stats' | 'metrics' | 'proxy';

/** The node subresource a path is authorized as, as the kubelet maps its paths. */
export function nodeSubresource(path: string): NodeSubresource {
  if (path === '/stats' || path.startsWith('/stats/')) return 'stats';
  if (path === '/metrics' || path.startsWith('/metrics/')) return 'metrics';
  return 'proxy';
}

/** The verb an HTTP method is authorized as, as the kubelet maps methods. */
export function requestVerb(method: string | undefined): string {
  switch ((method ?? 'GET').toUpperCase()) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

export interface PortCaller {
  user: string;
  groups: string[];
}

export interface SubjectAccessReviewStatus {
  allowed?: boolean;
}

export interface PortAuthorizerDeps {
  clock: Clock;
  nodeName: string;
  /** Creates a SubjectAccessReview with this spec; its status says. */
  review(spec: Record<string, unknown>): Promise<SubjectAccessReviewStatus | undefined>;
}

const ALLOWED_TTL_MS = 5 * 60_000;
const DENIED_TTL_MS = 30_000;
/** Callers remembered at most: a port scanned with many certificates stays bounded. */
const MAX_ENTRIES = 1000;

export class PortAuthorizer {
  private readonly answers = new Map<string, { allowed: boolean; until: number }>();
  /** Questions on their way to the API server: a caller opening several connections asks once. */
  private readonly asking = new Map<string, Promise<boolean>>();

  constructor(private readonly d: PortAuthorizerDeps) {}

  allowed(caller: PortCaller, verb: string, subresource: NodeSubresource): Promise<boolean> {
    const key = JSON.stringify([caller.user, [...caller.groups].sort(), verb, subresource]);
    const known = this.answers.get(key);
    if (known && known.until > this.d.clock.now()) return Promise.resolve(known.allowed);
    let pending = this.asking.get(key);
    if (!pending) {
      pending = this.ask(key, caller, verb, subresource).finally(() => this.asking.delete(key));
      this.asking.set(key, pending);
    }
    return pending;
  }

  private async ask(key: string, caller: PortCaller, verb: string, subresource: NodeSubresource): Promise<boolean> {
    const now = this.d.clock.now();
    let allowed = false;
    try {
      const status = await this.d.review({ user: caller.user, groups: caller.groups, resourceAttributes: { verb, resource: 'nodes', subresource, name: this.d.nodeName } });
      allowed = status?.allowed === true;
    } catch {
      // The API server could not be asked: refused now, asked again next time.
      return false;
    }
    if (this.answers.size >= MAX_ENTRIES) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, { allowed, until: now + (allowed ? ALLOWED_TTL_MS : DENIED_TTL_MS) });
    return allowed;
  }
}
