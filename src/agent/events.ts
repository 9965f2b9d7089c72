// Events the agent records about its Node and pods (core/v1 Events, as the kubelet's recorder
// writes them: node events in "default" with the node name as the involved object's uid).
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../api/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi, errorText } from './api.js';
import { rfc3339 } from '../util/time.js';

export const AGENT_COMPONENT = 'skiff-agent';

export class EventRecorder {
  constructor(
    private readonly api: AgentApi,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly nodeName: string,
  ) {}

  /** Fire and forget: an event that cannot be written is not worth failing anything for. */
  node(reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): Promise<void> {
    return this.record('default', { kind: 'Node', name: this.nodeName, uid: this.nodeName, apiVersion: 'v1' }, reason, message, type);
  }

  pod(pod: KubeObject, reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal', fieldPath?: string): Promise<void> {
    const ns = pod.metadata.namespace ?? 'default';
    return this.record(ns, { kind: 'Pod', namespace: ns, name: pod.metadata.name, uid: pod.metadata.uid, apiVersion: 'v1', ...(fieldPath ? { fieldPath } : {}) }, reason, message, type);
  }

  private async record(namespace: string, involved: Record<string, unknown>, reason: string, message: string, type: string): Promise<void> {
    const t = rfc3339(this.clock.now());
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${String(involved.name)}.${randomBytes(8).toString('hex')}`, namespace },
      involvedObject: involved,
      reason,
      message,
      type,
      source: { component: AGENT_COMPONENT, host: this.nodeName },
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1,
      reportingComponent: AGENT_COMPONENT,
      reportingInstance: this.nodeName,
    };
    try {
      await this.api.create(`/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, body);
    } catch (e) {
      this.log.debug({ reason, err: errorText(e) }, 'could not record event');
    }
  }
}
