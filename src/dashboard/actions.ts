// What the dashboard's buttons do, each one API call (or, for drain, a few) made with the user's own
// credentials: RBAC decides, and a refusal comes back with the API's own message.
import { isDaemonSetPod, isTerminal, type Pod } from '../api/kinds/pod.js';
import { isStatusError } from '../api/errors.js';
import { RETIRE_ANNOTATION, nodePath } from '../agent/api.js';
import type { ApiClient } from '../client/rest.js';
import { errorText } from '../util/error-text.js';
import type { ActionRequest, ActionResult } from './view.js';
import { WORKLOAD_PATHS } from './workload-rows.js';

function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

function refusal(e: unknown): ActionResult {
  if (isStatusError(e)) return { ok: false, message: e.status.message ?? errorText(e), code: e.status.code ?? 500 };
  return { ok: false, message: errorText(e) };
}

/** Checks the shape of what the page sent: the request body is input like any other. */
export function parseAction(body: unknown): ActionRequest | string {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  const str = (k: string) => (typeof b[k] === 'string' && b[k] !== '' ? (b[k] as string) : undefined);
  switch (b.action) {
    case 'cordon':
    case 'uncordon':
    case 'drain':
    case 'retire': {
      const node = str('node');
      return node ? { action: b.action, node } : `${b.action} needs "node"`;
    }
    case 'delete-pod': {
      const namespace = str('namespace');
      const pod = str('pod');
      return namespace && pod ? { action: 'delete-pod', namespace, pod } : 'delete-pod needs "namespace" and "pod"';
    }
    case 'scale': {
      const kind = str('kind');
      const namespace = str('namespace');
      const name = str('name');
      const replicas = b.replicas;
      if (kind !== 'Deployment' && kind !== 'StatefulSet') return 'scale applies to a Deployment or a StatefulSet';
      if (!namespace || !name) return 'scale needs "namespace" and "name"';
      if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) return '"replicas" must be a whole number, 0 or more';
      return { action: 'scale', kind, namespace, name, replicas };
    }
    default:
      return `unknown action ${JSON.stringify(b.action)}: one of cordon, uncordon, drain, retire, delete-pod, scale`;
  }
}

export interface ActionContext {
  client: ApiClient;
  /** The pods bound to a node now (for drain). */
  podsOn(node: string): Pod[];
}

export async function runAction(a: ActionRequest, ctx: ActionContext): Promise<ActionResult> {
  const { client } = ctx;
  try {
    switch (a.action) {
      case 'cordon':
      case 'uncordon':
        await client.patch(nodePath(a.node), { spec: { unschedulable: a.action === 'cordon' ? true : null } }, 'strategic');
        return { ok: true, message: `node/${a.node} ${a.action}ed` };
      case 'retire':
        await client.patch(nodePath(a.node), { metadata: { annotations: { [RETIRE_ANNOTATION]: 'true' } } }, 'merge');
        return { ok: true, message: `node/${a.node} marked for retirement: its agent drains it and removes it` };
      case 'drain':
        return await drain(a.node, ctx);
      case 'delete-pod':
        await client.delete(podPath(a.namespace, a.pod));
        return { ok: true, message: `pod ${a.namespace}/${a.pod} deleted` };
      case 'scale': {
        const p = WORKLOAD_PATHS[a.kind];
        const path = `/${p.group}/namespaces/${encodeURIComponent(a.namespace)}/${p.resource}/${encodeURIComponent(a.name)}/scale`;
        await client.patch(path, { spec: { replicas: a.replicas } }, 'merge');
        return { ok: true, message: `${a.kind.toLowerCase()}.apps/${a.name} scaled to ${a.replicas}` };
      }
    }
  } catch (e) {
    return refusal(e);
  }
}

/**
 * `kubectl drain --ignore-daemonsets --delete-emptydir-data`: cordon, then one eviction per pod
 * (PodDisruptionBudgets decide). Pods a budget holds back are named; the page can drain again.
 */
async function drain(node: string, ctx: ActionContext): Promise<ActionResult> {
  await ctx.client.patch(nodePath(node), { spec: { unschedulable: true } }, 'strategic');
  const pods = ctx.podsOn(node).filter((p) => !isTerminal(p) && !isDaemonSetPod(p) && !p.metadata.deletionTimestamp);
  let evicted = 0;
  const blocked: string[] = [];
  for (const p of pods) {
    const ns = p.metadata.namespace ?? 'default';
    try {
      await ctx.client.create(`${podPath(ns, p.metadata.name!)}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: ns } });
      evicted++;
    } catch (e) {
      if (isStatusError(e) && e.status.code === 404) continue;
      if (isStatusError(e) && e.status.code === 403) return refusal(e);
      blocked.push(`${ns}/${p.metadata.name}: ${errorText(e)}`);
    }
  }
  const head = `node/${node} cordoned; ${evicted} pod${evicted === 1 ? '' : 's'} evicted`;
  return blocked.length ? { ok: false, message: `${head}; not evicted: ${blocked.join('; ')}`, code: 429 } : { ok: true, message: head };
}
