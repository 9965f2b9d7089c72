// skiff's version, and the Kubernetes API version it serves: the one place each is written.

/** This release of skiff (package.json's version). */
export const SKIFF_VERSION = '0.1.0';

/** The Kubernetes release whose API the server serves (`kubectl version` shows it). */
export const KUBERNETES_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-skiff' } as const;

/** What a node reports as its kubelet version. */
export const NODE_VERSION = `v${KUBERNETES_VERSION.major}.${KUBERNETES_VERSION.minor}.0-skiff.${SKIFF_VERSION}`;

/** The User-Agent a skiff component sends: `skiff-agent/0.1.0 (node-1)`. */
export function userAgent(component: string, detail?: string): string {
  return `${component}/${SKIFF_VERSION}${detail ? ` (${detail})` : ''}`;
}
