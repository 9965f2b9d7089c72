// Who is asking: the identity every authenticator produces and every authorizer judges.
export interface UserInfo {
  name: string;
  groups: string[];
  /** Extra attributes (impersonated with Impersonate-Extra-<key>), passed on to extension API servers. */
  extra?: Record<string, string[]>;
}

/** The group every node credential carries, and the user name of node `name`'s (as upstream's Node authorizer expects). */
export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

export function nodeUserName(nodeName: string): string {
  return `${NODE_USER_PREFIX}${nodeName}`;
}

/** The node a node credential belongs to; undefined for every other user. */
export function nodeNameOf(user: UserInfo): string | undefined {
  return user.groups.includes(NODES_GROUP) && user.name.startsWith(NODE_USER_PREFIX) ? user.name.slice(NODE_USER_PREFIX.length) : undefined;
}

/** Turns a bearer token into the user it stands for (static tokens, bootstrap tokens, service-account tokens). */
export interface TokenAuthenticator {
  /** The user a bearer token stands for, or undefined when it is not valid. */
  authenticate(token: string): Promise<UserInfo | undefined>;
}
