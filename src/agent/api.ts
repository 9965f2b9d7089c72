// The slice of ApiClient the agent's loops use. Narrow on purpose: unit tests hand the loops an
// in-memory fake with the same five methods and drive them with a FakeClock.
import { isStatusError } from '../api/errors.js';
import type { ApiClient, RequestOptions } from '../client/rest.js';

export type AgentApi = Pick<ApiClient, 'get' | 'create' | 'replace' | 'patch' | 'delete'>;

/**
 * A node's heartbeats (Lease renewals, node status): sent ahead of its other waiting requests, as
 * a kubelet's renewal never waits behind its pod writes, nor, on its own connection, behind
 * another node's (a fleet shares one).
 */
export const HEARTBEAT: RequestOptions = { urgent: true };

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export { MACHINE_ID_ANNOTATION } from '../api/kinds/node.js';
export const RETIRE_ANNOTATION = 'skiff.dev/retire';

export function nodePath(name: string): string {
  return `/api/v1/nodes/${encodeURIComponent(name)}`;
}

export function leasePath(name: string): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases/${encodeURIComponent(name)}`;
}

export function leasesPath(): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`;
}

export function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

/** The API answered 404: the object does not exist (as opposed to: the API could not be asked). */
export function isNotFound(e: unknown): boolean {
  return isStatusError(e) && e.code === 404;
}

export function isConflict(e: unknown): boolean {
  return isStatusError(e) && e.code === 409 && e.reason === 'Conflict';
}

export function isAlreadyExists(e: unknown): boolean {
  return isStatusError(e) && e.code === 409 && e.reason === 'AlreadyExists';
}


