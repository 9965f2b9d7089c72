// Records core/v1 Events for controller decisions, aggregating repeats into one Event with a
// count, as client-go's event recorder does, so a hot loop cannot flood the API.
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


export class EventRecorder {
  private readonly seen = new Map<string, Seen>();

  constructor(
    private readonly client: ApiClient,
    private readonly source: EventSource,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Fire and forget: an event that cannot be written must never block a reconcile. */
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.record(obj, type, reason, message).catch((e: unknown) => this.log.debug({ reason, err: String(e) }, 'could not record event'));
  }

  private async record(obj: KubeObject, type: string, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace || 'default';
    const involved = {
      kind: obj.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      apiVersion: obj.apiVersion,
      resourceVersion: obj.metadata.resourceVersion,
    };
    const key = JSON.stringify([involved.kind, involved.namespace, involved.name, involved.uid, type, reason, message]);
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
}
