// The front-proxy (requestheader) convention by which the aggregation layer tells an extension API
// server who is asking: the user in X-Remote-User, each group in an X-Remote-Group header, extra
// attributes in X-Remote-Extra-<key>, on a connection whose client certificate the front-proxy CA
// signed. The extension server learns the CA, the allowed certificate names and the header names
// from the `extension-apiserver-authentication` ConfigMap in kube-system, published here.
import type { OutgoingHttpHeaders } from 'node:http';
import type { UserInfo } from '../request-context.js';
import { FRONT_PROXY_CLIENT_NAME } from '../../pki/cluster-pki.js';

export const USERNAME_HEADER = 'X-Remote-User';
export const GROUP_HEADER = 'X-Remote-Group';
export const EXTRA_HEADER_PREFIX = 'X-Remote-Extra-';

export const EXTENSION_AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication';
export const EXTENSION_AUTHENTICATION_NAMESPACE = 'kube-system';
/** The Role upstream keeps beside it, which extension servers bind to read the ConfigMap. */
export const EXTENSION_AUTHENTICATION_READER_ROLE = 'extension-apiserver-authentication-reader';

/** The user the availability checks ask as: a member of system:masters, so any server lets it read discovery. */
export const AGGREGATOR_USER: UserInfo = { name: 'system:kube-aggregator', groups: ['system:masters'] };

/**
 * Extra keys travel in header names, which allow fewer characters than keys may hold: upstream
 * percent-encodes every byte outside the unreserved set (and lower-cases nothing).
 */
function encodeExtraKey(key: string): string {
  return Buffer.from(key, 'utf8').reduce((out, b) => {
    const c = String.fromCharCode(b);
    return out + (/[A-Za-z0-9\-_.~]/.test(c) && b < 0x80 ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`);
  }, '');
}

/** The headers that say who `user` is to an extension server. */
export function identityHeaders(user: UserInfo): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { [USERNAME_HEADER]: user.name };
  if (user.groups.length > 0) out[GROUP_HEADER] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) if (values.length > 0) out[`${EXTRA_HEADER_PREFIX}${encodeExtraKey(key)}`] = [...values];
  return out;
}

/** Whether a client's header is one the proxy sets itself: a client must never pass its own. */
export function isIdentityHeader(lowerName: string): boolean {
  return lowerName === USERNAME_HEADER.toLowerCase() || lowerName === GROUP_HEADER.toLowerCase() || lowerName.startsWith(EXTRA_HEADER_PREFIX.toLowerCase());
}

/** The ConfigMap's data, under upstream's keys (JSON lists of header names, PEM bundles). */
export function extensionAuthenticationData(clientCaPem: string, frontProxyCaPem: string): Record<string, string> {
  return {
    'client-ca-file': clientCaPem,
    'requestheader-client-ca-file': frontProxyCaPem,
    'requestheader-allowed-names': JSON.stringify([FRONT_PROXY_CLIENT_NAME]),
    'requestheader-extra-headers-prefix': JSON.stringify([EXTRA_HEADER_PREFIX]),
    'requestheader-group-headers': JSON.stringify([GROUP_HEADER]),
    'requestheader-username-headers': JSON.stringify([USERNAME_HEADER]),
  };
}
