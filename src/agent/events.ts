// Events the agent records about its Node and pods, as the kubelet's recorder writes them (node
// events in "default" with the node name as the involved object's uid), through the same
// recorder the controllers use: repeats aggregate into one Event's count, and a pod whose probe
// fails every second cannot flood the API.
import type { KubeObject } from '../api/types.js';
import { EventRecorder as SharedRecorder } from '../controller-kit/events.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { type AgentApi } from './api.js';
import { errorText } from '../util/error-text.js';

export const AGENT_COMPONENT = 'skiff-agent';

export class EventRecorder {
  private readonly recorder: SharedRecorder;

  constructor(
    api: AgentApi,
    clock: Clock,
    private readonly logger: Logger,
    private readonly nodeName: string,
  ) {
    this.recorder = new SharedRecorder(api, { component: AGENT_COMPONENT, host: nodeName }, clock, logger);
  }

  /** Fire and forget: an event that cannot be written is not worth failing anything for. */
  node(reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): Promise<void> {
    // The kubelet's node events use the node name as the involved object's uid.
    const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: this.nodeName, uid: this.nodeName } };
    return this.recorder.record(node, type, reason, message).catch((e: unknown) => this.log(reason, e));
  }

  pod(pod: KubeObject, reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal', fieldPath?: string): Promise<void> {
    const ref: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace ?? 'default', uid: pod.metadata.uid } };
    return this.recorder.record(ref, type, reason, message, fieldPath).catch((e: unknown) => this.log(reason, e));
  }

  /** An event about any other object (a claim the node's provisioner works for). */
  object(o: KubeObject, reason: string, message: string, type: 'Normal' | 'Warning' = 'Normal'): Promise<void> {
    const ref: KubeObject = { apiVersion: o.apiVersion ?? 'v1', kind: o.kind ?? '', metadata: { name: o.metadata.name, namespace: o.metadata.namespace, uid: o.metadata.uid } };
    return this.recorder.record(ref, type, reason, message).catch((e: unknown) => this.log(reason, e));
  }

  private log(reason: string, e: unknown): void {
    this.logger.debug({ reason, err: errorText(e) }, 'could not record event');
  }
}

/** The kubelet's event reason for a node condition reaching a status ("Node x status is now: <reason>"). */
export function nodeConditionEventReason(type: string, status: string): string | undefined {
  const ok = status === 'False';
  switch (type) {
    case 'Ready':
      return status === 'True' ? 'NodeReady' : 'NodeNotReady';
    case 'MemoryPressure':
      return ok ? 'NodeHasSufficientMemory' : 'NodeHasInsufficientMemory';
    case 'DiskPressure':
      return ok ? 'NodeHasNoDiskPressure' : 'NodeHasDiskPressure';
    case 'PIDPressure':
      return ok ? 'NodeHasSufficientPID' : 'NodeHasInsufficientPID';
    default:
      return undefined;
  }
}
