// How an agent turns a bootstrap token into a node credential: it sends a certificate request
// for its node name and gets back a client certificate for system:node:<name>.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, forbidden } from '../api/errors.js';
import { isDNS1123Subdomain } from '../api/validation.js';
import { signCertificateRequest, type CertificateAuthority } from '../pki/certificates.js';
import { NO_RULE, type Authorizer } from './auth.js';
import { decodeObjectBody, readBody, sendJson } from './http/codec.js';
import type { RequestInfo } from './http/request-info.js';
import type { UserInfo } from './request-context.js';
import { CA_PATH, JOIN_PATH } from '../api/join-paths.js';
import { NODES_GROUP, nodeUserName } from '../auth/user.js';

export { CA_PATH, JOIN_PATH };

/** Holders of a bootstrap token may only ask to join. */
export class BootstrapAuthorizer implements Authorizer {
  async authorize(user: UserInfo, info: RequestInfo): Promise<string | undefined> {
    if (user.groups.includes('system:bootstrappers') && info.kind === 'nonresource' && info.path === JOIN_PATH) return undefined;
    return NO_RULE;
  }
}

export async function serveJoin(req: IncomingMessage, res: ServerResponse, user: UserInfo, ca: CertificateAuthority): Promise<void> {
  if (req.method !== 'POST') throw badRequest(`${JOIN_PATH} takes POST`);
  if (!user.groups.includes('system:bootstrappers') && !user.groups.includes('system:masters')) {
    throw forbidden(`User "${user.name}" cannot join nodes: a bootstrap token is required`);
  }
  const body = decodeObjectBody(await readBody(req, 64 * 1024), 'application/json') as unknown as { nodeName?: unknown; csrPem?: unknown };
  const nodeName = body.nodeName;
  if (typeof nodeName !== 'string' || nodeName === '') throw badRequest('nodeName: Required value');
  const invalidName = isDNS1123Subdomain(nodeName);
  if (invalidName.length > 0) throw badRequest(`nodeName: Invalid value: ${JSON.stringify(nodeName)}: ${invalidName.join('; ')}`);
  if (typeof body.csrPem !== 'string') throw badRequest('csrPem: Required value');
  let certificatePem: string;
  try {
    certificatePem = await signCertificateRequest(ca, body.csrPem, { commonName: nodeUserName(nodeName), organizations: [NODES_GROUP], usage: 'client' });
  } catch (e) {
    throw badRequest(`csrPem: ${(e as Error).message}`);
  }
  sendJson(res, 201, { certificatePem, caPem: ca.certPem });
}
