// CertificateSigning, as upstream's plugin: a /status write that changes a
// CertificateSigningRequest's certificate or conditions needs the `sign` verb on the `signers`
// resource named after its signer (or `<domain>/*`).
import { forbiddenObject } from '../../api/errors.js';
import { obj, semanticEqual } from '../../api/kinds/json.js';
import type { ResourceType } from '../../api/resource.js';
import type { RbacAuthorizer } from '../rbac-authorizer.js';
import { isAuthorizedForSignerName, isCsrResource, signerOf } from './certificate-approval.js';
import type { AdmissionPlugin, Operation } from './plugin.js';

export function certificateSigning(rbac: RbacAuthorizer): AdmissionPlugin {
  return {
    name: 'CertificateSigning',
    handles: (operation: Operation, rt: ResourceType) => operation === 'UPDATE' && isCsrResource(rt),
    validate(a) {
      if (a.subresource !== 'status') return;
      const before = obj(a.oldObject?.status);
      const after = obj(a.object?.status);
      if (semanticEqual(before.certificate, after.certificate) && semanticEqual(before.conditions, after.conditions)) return;
      const signer = signerOf(a);
      if (!isAuthorizedForSignerName(rbac, a.user, 'sign', signer)) {
        throw forbiddenObject(a.resource.resource, a.resource.group, a.name, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
      }
    },
  };
}
