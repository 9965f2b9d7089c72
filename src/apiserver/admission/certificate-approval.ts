// CertificateApproval, as upstream's plugin: approving or denying a CertificateSigningRequest
// through /approval needs the `approve` verb on the `signers` resource named after its signer
// (or its domain's `<domain>/*`), beside `update` on certificatesigningrequests/approval.
import { forbiddenObject } from '../../api/errors.js';
import { CERTIFICATES_GROUP } from '../../api/kinds/certificatesigningrequest.js';
import { obj, str } from '../../api/kinds/json.js';
import type { ResourceType } from '../../api/resource.js';
import type { RbacAuthorizer } from '../rbac-authorizer.js';
import type { UserInfo } from '../request-context.js';
import type { AdmissionAttributes, AdmissionPlugin, Operation } from './plugin.js';

export function isCsrResource(rt: ResourceType): boolean {
  return rt.group === CERTIFICATES_GROUP && rt.resource === 'certificatesigningrequests';
}

/** Upstream's IsAuthorizedForSignerName: `verb` on signers/<signerName>, else on signers/<domain>/*. */
export function isAuthorizedForSignerName(rbac: RbacAuthorizer, user: UserInfo, verb: string, signerName: string): boolean {
  if (user.groups.includes('system:masters')) return true;
  const ask = (name: string): boolean => rbac.allows(user, { kind: 'resource', verb, group: CERTIFICATES_GROUP, resource: 'signers', name });
  return ask(signerName) || ask(`${signerName.split('/')[0]}/*`);
}

/** The signer a stored request names (the old object's: a write cannot move itself to another signer). */
export function signerOf(a: AdmissionAttributes): string {
  return str(obj(a.oldObject?.spec).signerName);
}

export function certificateApproval(rbac: RbacAuthorizer): AdmissionPlugin {
  return {
    name: 'CertificateApproval',
    handles: (operation: Operation, rt: ResourceType) => operation === 'UPDATE' && isCsrResource(rt),
    validate(a) {
      if (a.subresource !== 'approval') return;
      const signer = signerOf(a);
      if (!isAuthorizedForSignerName(rbac, a.user, 'approve', signer)) {
        throw forbiddenObject(a.resource.resource, a.resource.group, a.name, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
      }
    },
  };
}
