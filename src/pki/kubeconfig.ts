// kubeconfig files as kubectl and client libraries read them.
import { yaml } from '../util/lazy-yaml.js';

export interface KubeconfigParams {
  clusterName: string;
  server: string;
  caPem: string;
  user: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
}

export function renderKubeconfig(p: KubeconfigParams): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const user: Record<string, string> = {};
  if (p.clientCertPem) user['client-certificate-data'] = b64(p.clientCertPem);
  if (p.clientKeyPem) user['client-key-data'] = b64(p.clientKeyPem);
  if (p.token) user.token = p.token;
  const context = `${p.user}@${p.clusterName}`;
  return yaml().stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: p.clusterName, cluster: { server: p.server, 'certificate-authority-data': b64(p.caPem) } }],
    users: [{ name: p.user, user }],
    contexts: [{ name: context, context: { cluster: p.clusterName, user: p.user } }],
    'current-context': context,
    preferences: {},
  });
}

export interface ParsedKubeconfig {
  server: string;
  caPem?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
}

interface NamedEntry<T> {
  name: string;
  [key: string]: unknown;
  value?: T;
}

/** Reads the current context's cluster and user (inline data only, or files it names). */
export function parseKubeconfig(text: string, readFile: (path: string) => string): ParsedKubeconfig {
  const doc = yaml().parse(text) as Record<string, unknown>;
  const contexts = (doc.contexts ?? []) as NamedEntry<unknown>[];
  const current = (doc['current-context'] as string | undefined) ?? contexts[0]?.name;
  const ctx = (contexts.find((c) => c.name === current)?.context ?? {}) as { cluster?: string; user?: string };
  const cluster = (((doc.clusters ?? []) as NamedEntry<unknown>[]).find((c) => c.name === ctx.cluster)?.cluster ?? {}) as Record<string, unknown>;
  const user = (((doc.users ?? []) as NamedEntry<unknown>[]).find((u) => u.name === ctx.user)?.user ?? {}) as Record<string, unknown>;
  const data = (inline: unknown, file: unknown): string | undefined =>
    typeof inline === 'string' ? Buffer.from(inline, 'base64').toString() : typeof file === 'string' ? readFile(file) : undefined;
  const out: ParsedKubeconfig = { server: String(cluster.server ?? '') };
  const ca = data(cluster['certificate-authority-data'], cluster['certificate-authority']);
  if (ca) out.caPem = ca;
  const cert = data(user['client-certificate-data'], user['client-certificate']);
  if (cert) out.clientCertPem = cert;
  const key = data(user['client-key-data'], user['client-key']);
  if (key) out.clientKeyPem = key;
  if (typeof user.token === 'string') out.token = user.token;
  if (cluster['insecure-skip-tls-verify'] === true) out.insecureSkipTlsVerify = true;
  return out;
}
