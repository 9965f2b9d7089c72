// CertificateSubjectRestriction, as upstream's plugin: no one may ask the kube-apiserver-client
// signer for a certificate in system:masters, the group that no authorizer can refuse.
import { forbiddenObject } from '../../api/errors.js';
import { KUBE_APISERVER_CLIENT_SIGNER, checkedRequest } from '../../api/kinds/certificatesigningrequest.js';
import { obj, str } from '../../api/kinds/json.js';
import type { ResourceType } from '../../api/resource.js';
import { isCsrResource } from './certificate-approval.js';
import type { AdmissionPlugin, Operation } from './plugin.js';

export function certificateSubjectRestriction(): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    handles: (operation: Operation, rt: ResourceType) => operation === 'CREATE' && isCsrResource(rt),
    validate(a) {
      if (str(obj(a.object?.spec).signerName) !== KUBE_APISERVER_CLIENT_SIGNER) return;
      const req = checkedRequest(a.object!);
      if (typeof req === 'string') return;
      if (req.organizations.includes('system:masters')) {
        throw forbiddenObject(a.resource.resource, a.resource.group, a.name, `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`);
      }
    },
  };
}
