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
  /**
   * Every API server of an HA cluster: each gets a cluster and context of its own
   * (`kubectl --context admin@skiff-server-2`), and the main cluster lists them in an extension
   * skiff's own commands fail over among.
   */
  members?: { name: string; server: string }[];
}

/** The kubeconfig cluster extension that lists every API server (kubectl keeps it, and ignores it). */
export const MEMBERS_EXTENSION = 'skiff.dev/members';

export function renderKubeconfig(p: KubeconfigParams): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const user: Record<string, string> = {};
  if (p.clientCertPem) user['client-certificate-data'] = b64(p.clientCertPem);
  if (p.clientKeyPem) user['client-key-data'] = b64(p.clientKeyPem);
  if (p.token) user.token = p.token;
  const context = `${p.user}@${p.clusterName}`;
  const ca = b64(p.caPem);
  const main: Record<string, unknown> = { server: p.server, 'certificate-authority-data': ca };
  const members = p.members ?? [];
  if (members.length > 0) main.extensions = [{ name: MEMBERS_EXTENSION, extension: { servers: members.map((m) => m.server) } }];
  const memberCluster = (m: { name: string }) => `${p.clusterName}-${m.name}`;
  return yaml().stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: p.clusterName, cluster: main },
      ...members.map((m) => ({ name: memberCluster(m), cluster: { server: m.server, 'certificate-authority-data': ca } })),
    ],
    users: [{ name: p.user, user }],
    contexts: [
      { name: context, context: { cluster: p.clusterName, user: p.user } },
      ...members.map((m) => ({ name: `${p.user}@${memberCluster(m)}`, context: { cluster: memberCluster(m), user: p.user } })),
    ],
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
  /** The API servers the cluster's members extension lists (empty without one). */
  members: string[];
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
  const ext = (Array.isArray(cluster.extensions) ? cluster.extensions : []) as { name?: string; extension?: { servers?: unknown } }[];
  const listed = ext.find((e) => e.name === MEMBERS_EXTENSION)?.extension?.servers;
  const members = Array.isArray(listed) ? listed.filter((x): x is string => typeof x === 'string') : [];
  const out: ParsedKubeconfig = { server: String(cluster.server ?? ''), members };
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
