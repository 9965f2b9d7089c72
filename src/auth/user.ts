// Who is asking: the identity every authenticator produces and every authorizer judges.
export interface UserInfo {
  name: string;
  groups: string[];
}

/** Turns a bearer token into the user it stands for (static tokens, bootstrap tokens, service-account tokens). */
export interface TokenAuthenticator {
  /** The user a bearer token stands for, or undefined when it is not valid. */
  authenticate(token: string): Promise<UserInfo | undefined>;
}
