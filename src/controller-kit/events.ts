// Records core/v1 Events (for controllers and for the agent), as client-go's event recorder does,
// so a hot loop or a probe failing every second cannot flood the API:
//  - repeats of one event (same object, type, reason, message) become one Event with a count;
//  - each object may have 25 events written at once, then one more per 5 minutes (upstream's
//    spam filter); the rest are dropped.
import type { KubeObject } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import type { ApiClient } from '../client/rest.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { rfc3339 } from '../util/time.js';

export interface EventSource {
  component: string;
  host?: string;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
}

/** Upstream's EventSourceObjectSpamFilter: burst 25, one token per 5 minutes. */
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 5 * 60_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** What the recorder writes with: an ApiClient, or the agent's view of one. */
export type EventWriter = Pick<ApiClient, 'create' | 'patch'>;

export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly client: EventWriter,
    private readonly source: EventSource,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Fire and forget: an event that cannot be written must never block a reconcile. */
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, fieldPath?: string): void {
    void this.record(obj, type, reason, message, fieldPath).catch((e: unknown) => this.log.debug({ reason, err: String(e) }, 'could not record event'));
  }

  /** The same, for callers that want to know when the write is done (or dropped). */
  async record(obj: KubeObject, type: string, reason: string, message: string, fieldPath?: string): Promise<void> {
    const namespace = obj.metadata.namespace || 'default';
    const involved = {
      kind: obj.kind,
      ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      apiVersion: obj.apiVersion,
      ...(obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      ...(fieldPath ? { fieldPath } : {}),
    };
    if (!this.allow(JSON.stringify([involved.kind, involved.namespace, involved.name, involved.uid]))) return;
    const key = JSON.stringify([involved.kind, involved.namespace, involved.name, involved.uid, fieldPath, type, reason, message]);
    const now = rfc3339(this.clock.now());
    const seen = this.seen.get(key);
    if (seen) {
      seen.count++;
      try {
        await this.client.patch(`/api/v1/namespaces/${seen.namespace}/events/${seen.name}`, { count: seen.count, lastTimestamp: now }, 'merge');
        return;
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
        this.seen.delete(key);
      }
    }
    if (this.seen.size > 4096) this.seen.clear();
    const name = `${obj.metadata.name}.${this.clock.now().toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`;
    await this.client.create(`/api/v1/namespaces/${namespace}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: involved,
      reason,
      message,
      type,
      source: this.source,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.source.component,
      reportingInstance: this.source.host ?? '',
    });
    this.seen.set(key, { name, namespace, count: 1 });
  }

  /** Takes a token from the object's bucket; false when it has none left. */
  private allow(object: string): boolean {
    const now = this.clock.now();
    let b = this.buckets.get(object);
    if (!b) {
      if (this.buckets.size > 4096) this.buckets.clear();
      this.buckets.set(object, (b = { tokens: SPAM_BURST, at: now }));
    }
    const refilled = Math.floor((now - b.at) / SPAM_REFILL_MS);
    if (refilled > 0) {
      b.tokens = Math.min(SPAM_BURST, b.tokens + refilled);
      b.at += refilled * SPAM_REFILL_MS;
    }
    if (b.tokens <= 0) return false;
    b.tokens--;
    return true;
  }
}
