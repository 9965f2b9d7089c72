// Registry credentials from a pod's imagePullSecrets, matched to an image as the kubelet's
// credential keyring does: a secret of type kubernetes.io/dockerconfigjson (`.dockerconfigjson`,
// {"auths": {KEY: {...}}}) or kubernetes.io/dockercfg (`.dockercfg`, {KEY: {...}}); a KEY is a
// registry host with an optional scheme, port and path ("registry.example.com:5000/team",
// "https://index.docker.io/v1/", "*.example.com"); the most specific key that matches the image's
// registry and repository wins. Docker Hub's many names are one registry.
import type { AuthConfig } from '../cri/messages.js';

interface DockerAuth {
  username?: string;
  password?: string;
  auth?: string;
  identitytoken?: string;
}

export interface RegistryKey {
  host: string;
  port: string;
  path: string;
}

const DOCKER_HUB = 'docker.io';
const HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

function hub(host: string): string {
  return HUB_ALIASES.has(host) ? DOCKER_HUB : host;
}

/** A credential key, without scheme; undefined when it cannot be read. */
export function parseRegistryKey(key: string): RegistryKey | undefined {
  const bare = key.trim().replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
  if (!bare) return undefined;
  const slash = bare.indexOf('/');
  const hostPort = slash < 0 ? bare : bare.slice(0, slash);
  let path = slash < 0 ? '' : bare.slice(slash + 1);
  // Docker Hub's legacy key names a version, not a repository.
  if (/^v[12]$/.test(path)) path = '';
  const m = /^([^:]+)(?::(\d+))?$/.exec(hostPort.toLowerCase());
  if (!m) return undefined;
  return { host: hub(m[1]!), port: m[2] ?? '', path };
}

/** The registry and repository of an image reference, with Docker Hub's defaults. */
export function imageLocation(image: string): RegistryKey {
  const ref = image.split('@')[0]!;
  const first = ref.split('/')[0]!;
  const explicit = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  let rest = explicit ? ref.slice(first.length + 1) : ref;
  // The tag is after the last slash's last colon.
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.indexOf(':', lastSlash + 1);
  if (colon >= 0) rest = rest.slice(0, colon);
  if (!explicit) return { host: DOCKER_HUB, port: '', path: rest.includes('/') ? rest : `library/${rest}` };
  const m = /^([^:]+)(?::(\d+))?$/.exec(first.toLowerCase());
  const host = hub(m?.[1] ?? first);
  return { host, port: m?.[2] ?? '', path: host === DOCKER_HUB && !rest.includes('/') ? `library/${rest}` : rest };
}

/** Host names match by dot-separated parts, a `*` part matching any one part (as the keyring's globs). */
function hostMatches(glob: string, host: string): boolean {
  const g = glob.split('.');
  const h = host.split('.');
  return g.length === h.length && g.every((part, i) => part === '*' || part === h[i]);
}

function matches(key: RegistryKey, image: RegistryKey): boolean {
  if (!hostMatches(key.host, image.host) || key.port !== image.port) return false;
  return key.path === '' || image.path === key.path || image.path.startsWith(`${key.path}/`);
}

/** The entries of a pull secret's data (`.dockerconfigjson` or `.dockercfg`); none when it holds neither or cannot be read. */
export function dockerConfigEntries(data: Map<string, Buffer>): Map<string, DockerAuth> {
  const out = new Map<string, DockerAuth>();
  const read = (key: string): unknown => {
    const b = data.get(key);
    if (!b) return undefined;
    try {
      return JSON.parse(b.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  };
  const json = read('.dockerconfigjson') as { auths?: Record<string, DockerAuth> } | undefined;
  const legacy = read('.dockercfg') as Record<string, DockerAuth> | undefined;
  const auths = json?.auths ?? legacy ?? {};
  if (typeof auths !== 'object' || auths === null) return out;
  for (const [k, v] of Object.entries(auths)) if (v && typeof v === 'object') out.set(k, v);
  return out;
}

/** The credential for an image among the pod's pull secrets (in their order): the most specific match, or none. */
export function credentialFor(image: string, secrets: Map<string, DockerAuth>[]): AuthConfig | undefined {
  const at = imageLocation(image);
  let best: { auth: AuthConfig; specificity: number } | undefined;
  for (const entries of secrets) {
    for (const [k, v] of entries) {
      const key = parseRegistryKey(k);
      if (!key || !matches(key, at)) continue;
      // A longer path, then an exact host over a glob, is more specific; the first secret wins a tie.
      const specificity = key.path.length * 2 + (key.host.includes('*') ? 0 : 1);
      if (best && best.specificity >= specificity) continue;
      let { username, password } = v;
      if ((!username || !password) && typeof v.auth === 'string') {
        const decoded = Buffer.from(v.auth, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon > 0) [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
      }
      // containerd sends a credential only to the host its server address (a URL) names. Docker
      // Hub is served from another name than its images carry: no address, as the kubelet sends it.
      const auth: AuthConfig = at.host === DOCKER_HUB ? {} : { serverAddress: `https://${at.port ? `${at.host}:${at.port}` : at.host}` };
      if (username) auth.username = username;
      if (password) auth.password = password;
      if (typeof v.identitytoken === 'string' && v.identitytoken) auth.identityToken = v.identitytoken;
      best = { auth, specificity };
    }
  }
  return best?.auth;
}
