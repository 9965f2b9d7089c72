// The data of a ConfigMap or Secret a pod uses, read through the API with the node's credentials
// (the Node authorizer lets a node read exactly those its pods name): env and volumes both start here.
import type { AgentApi } from './api.js';
import { isNotFound } from './api.js';

export type ConfigKind = 'configmaps' | 'secrets';

/** Each key's bytes (a Secret's data and a ConfigMap's binaryData decoded from base64); undefined when the object does not exist. */
export async function readConfigData(api: AgentApi, namespace: string, kind: ConfigKind, name: string): Promise<Map<string, Buffer> | undefined> {
  let o: { data?: Record<string, string>; binaryData?: Record<string, string> };
  try {
    o = await api.get(`/api/v1/namespaces/${encodeURIComponent(namespace)}/${kind}/${encodeURIComponent(name)}`);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(o.data ?? {})) out.set(k, kind === 'secrets' ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  if (kind === 'configmaps') for (const [k, v] of Object.entries(o.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  return out;
}

export function kindWord(kind: ConfigKind): 'configmap' | 'secret' {
  return kind === 'configmaps' ? 'configmap' : 'secret';
}
