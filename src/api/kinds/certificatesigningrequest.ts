// certificates.k8s.io/v1 CertificateSigningRequest: a request for an X.509 certificate from a named
// signer. The server records who asked (spec.username, uid, groups, extra); approval (/approval)
// and issuance (/status) are separate writes, so that who may approve and who may sign can differ.
import { field } from '../errors.js';
import type { Requester, ResourceType } from '../resource.js';
import type { KubeObject, StatusCause } from '../types.js';
import { isDNS1123Label, isDNS1123Subdomain, validateMeta } from '../validation.js';
import { arr, obj, objArr, optNum, semanticEqual, str } from './json.js';
import { age, column, humanDuration, nameColumn, orNone } from './printing.js';
import { certificateBlocksError, parseCertificateRequest, signatureFailure, type ParsedCertificateRequest } from '../../pki/certificate-request.js';

export const CERTIFICATES_GROUP = 'certificates.k8s.io';

/** The signers kube-controller-manager runs. */
export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

export type ConditionType = 'Approved' | 'Denied' | 'Failed';

export interface CsrCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface CertificateSigningRequest extends KubeObject {
  spec: {
    request: string;
    signerName: string;
    expirationSeconds?: number;
    usages?: string[];
    username?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  status?: { conditions?: CsrCondition[]; certificate?: string };
}

/** Upstream's KeyUsage values, sorted as its validation lists them. */
export const KEY_USAGES: readonly string[] = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment', 'decipher only',
  'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'key agreement',
  'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime', 'server auth', 'signing', 'timestamping',
];
const KNOWN_USAGES = new Set(KEY_USAGES);
const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);

export function conditionsOf(o: KubeObject): CsrCondition[] {
  return objArr(obj(o.status).conditions) as unknown as CsrCondition[];
}

export function hasCondition(o: KubeObject, type: ConditionType): boolean {
  return conditionsOf(o).some((c) => c.type === type && c.status === 'True');
}

/** The PEM text of spec.request (base64 in JSON). */
export function requestPem(o: KubeObject): string {
  return Buffer.from(str(obj(o.spec).request), 'base64').toString('latin1');
}

/** The PEM text of status.certificate, '' when none. */
export function certificatePem(o: KubeObject): string {
  return Buffer.from(str(obj(o.status).certificate), 'base64').toString('latin1');
}

/** The request parsed, or why it does not parse or verify (upstream's validateCSR). */
export function checkedRequest(o: KubeObject): ParsedCertificateRequest | string {
  let parsed: ParsedCertificateRequest;
  try {
    parsed = parseCertificateRequest(requestPem(o));
  } catch (e) {
    return (e as Error).message;
  }
  return parsed.signatureValid ? parsed : signatureFailure(parsed);
}

/** Go's %#v of a []byte, which is how upstream's message shows spec.request. */
function goBytes(b64: string): string {
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length === 0) return '[]byte(nil)';
  return `[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(', ')}}`;
}

/** Upstream's ValidateSignerName: `<domain with a dot>/<path>`, each part DNS labels/subdomains. */
export function validateSignerName(path: string, signerName: string): StatusCause[] {
  if (signerName === '') return [field.required(path)];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [field.invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, rest] = segments as [string, string];
  const out: StatusCause[] = [];
  if (domain.length > 253) out.push(field.tooLong(path, '', 253));
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) {
      out.push(...errs.map((e) => field.invalid(path, domain, `validating label ${JSON.stringify(label)}: ${e}`)));
      break;
    }
  }
  if (domainLabels.length < 2) out.push(field.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const label of rest.split('.')) {
    const errs = isDNS1123Subdomain(label);
    if (errs.length > 0) {
      out.push(...errs.map((e) => field.invalid(path, rest, `validating label ${JSON.stringify(label)}: ${e}`)));
      break;
    }
  }
  const max = 253 + (253 + 63 + 1) + 1;
  if (signerName.length > max) out.push(field.tooLong(path, '', max));
  return out;
}

/** What a write may do beyond a plain update (upstream's certificateValidationOptions). */
interface Options {
  settingApproval: boolean;
  settingCertificate: boolean;
}

interface Tolerated {
  bothApprovedAndDenied: boolean;
  legacySigner: boolean;
  duplicateTypes: boolean;
  emptyType: boolean;
  arbitraryCertificate: boolean;
  unknownUsages: boolean;
  duplicateUsages: boolean;
}

function hasDuplicates(values: string[]): boolean {
  return new Set(values).size !== values.length;
}

/** What an old object already got wrong is tolerated in its updates, as upstream's compatibility rules say. */
function tolerated(o: KubeObject, old: KubeObject | undefined): Tolerated {
  const oldConds = old ? conditionsOf(old) : [];
  const oldUsages = old ? arr(obj(old.spec).usages).map(str) : [];
  const oldCert = old ? str(obj(old.status).certificate) : '';
  return {
    bothApprovedAndDenied: oldConds.some((c) => c.type === 'Approved') && oldConds.some((c) => c.type === 'Denied'),
    legacySigner: old !== undefined && str(obj(old.spec).signerName) === LEGACY_UNKNOWN_SIGNER,
    duplicateTypes: hasDuplicates(oldConds.map((c) => c.type)),
    emptyType: oldConds.some((c) => !c.type),
    arbitraryCertificate: old !== undefined && (str(obj(o.status).certificate) === oldCert || certificateBlocksError(certificatePem(old)) !== undefined),
    unknownUsages: oldUsages.some((u) => !KNOWN_USAGES.has(u)),
    duplicateUsages: hasDuplicates(oldUsages),
  };
}

function validateConditions(o: KubeObject, t: Tolerated): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditionsOf(o).forEach((c, i) => {
    const path = `status.conditions[${i}]`;
    if (!t.emptyType && !c.type) out.push(field.required(`${path}.type`));
    const allowed = TRUE_ONLY.has(c.type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) out.push(field.required(`${path}.status`));
    else if (!allowed.includes(c.status)) out.push(field.notSupported(`${path}.status`, c.status, allowed));
    if (!t.bothApprovedAndDenied) {
      if (c.type === 'Approved') {
        approved = true;
        if (denied) out.push(field.invalid(`${path}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (c.type === 'Denied') {
        denied = true;
        if (approved) out.push(field.invalid(`${path}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!t.duplicateTypes) {
      if (seen.has(c.type)) out.push(field.duplicate(`${path}.type`, c.type));
      seen.add(c.type);
    }
  });
  return out;
}

function validateObject(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const t = tolerated(o, old);
  const spec = obj(o.spec);
  // Upstream does not care what certificate requests are called: any name (colons too) will do.
  const out = validateMeta(o, old, false, () => []);
  const checked = checkedRequest(o);
  if (typeof checked === 'string') out.push({ reason: 'FieldValueInvalid', field: 'spec.request', message: `Invalid value: ${goBytes(str(spec.request))}: ${checked}` });
  const usages = arr(spec.usages).map(str);
  if (usages.length === 0) out.push(field.required('spec.usages'));
  if (!t.unknownUsages) usages.forEach((u, i) => !KNOWN_USAGES.has(u) && out.push(field.notSupported(`spec.usages[${i}]`, u, [...KEY_USAGES])));
  if (!t.duplicateUsages) usages.forEach((u, i) => usages.indexOf(u) !== i && out.push(field.duplicate(`spec.usages[${i}]`, u)));
  const signerName = str(spec.signerName);
  if (!t.legacySigner && signerName === LEGACY_UNKNOWN_SIGNER) out.push(field.invalid('spec.signerName', signerName, 'the legacy signerName is not allowed via this API version'));
  else out.push(...validateSignerName('spec.signerName', signerName));
  const expiration = optNum(spec.expirationSeconds);
  if (expiration !== undefined && expiration < 600) out.push(field.invalid('spec.expirationSeconds', expiration, 'may not specify a duration less than 600 seconds (10 minutes)'));
  out.push(...validateConditions(o, t));
  if (!t.arbitraryCertificate) {
    const bad = certificateBlocksError(certificatePem(o));
    if (bad) out.push(field.invalid('status.certificate', '<certificate data>', bad));
  }
  return out;
}

function ofType(o: KubeObject, type: string): CsrCondition[] {
  return conditionsOf(o).filter((c) => c.type === type);
}

function validateUpdate(o: KubeObject, old: KubeObject, opts: Options): StatusCause[] {
  const out = validateObject(o, old);
  for (const type of ['Approved', 'Denied', 'Failed']) {
    if (ofType(o, type).length < ofType(old, type).length) out.push(field.forbidden('status.conditions', `updates may not remove a condition of type ${JSON.stringify(type)}`));
  }
  if (!opts.settingApproval) {
    for (const type of ['Approved', 'Denied']) {
      const before = ofType(old, type);
      const after = ofType(o, type);
      if (after.length > before.length) out.push(field.forbidden('status.conditions', `updates may not add a condition of type ${JSON.stringify(type)}`));
      else if (after.length === before.length && !semanticEqual(before, after)) {
        out.push(field.forbidden('status.conditions', `updates may not modify a condition of type ${JSON.stringify(type)}\n- ${JSON.stringify(before)}\n+ ${JSON.stringify(after)}`));
      }
    }
  }
  const cert = str(obj(o.status).certificate);
  const oldCert = str(obj(old.status).certificate);
  if (cert !== oldCert) {
    if (!opts.settingCertificate) out.push(field.forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert !== '') out.push(field.forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return out;
}

/** Upstream PrepareForCreate: the requester's identity from the request, a status with nothing approved. */
export function recordRequester(o: KubeObject, user: Requester | undefined): void {
  const spec = obj(o.spec);
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (user) {
    if (user.name) spec.username = user.name;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    if (user.extra && Object.keys(user.extra).length > 0) spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
  }
  o.spec = spec;
  o.status = {};
}

/** Upstream's populateConditionTimestamps: unset times become now, or the old transition time where type and status are unchanged. */
function stampConditions(o: KubeObject, old: KubeObject, now: string): void {
  const oldConds = conditionsOf(old);
  for (const c of conditionsOf(o)) {
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) c.lastTransitionTime = oldConds.find((p) => p.type === c.type && p.status === c.status && p.lastTransitionTime)?.lastTransitionTime ?? now;
  }
}

/** Upstream's preserveConditionInstances: a status write keeps Approved/Denied as they were (when it kept their count). */
function preserveConditions(o: KubeObject, old: KubeObject, type: string): void {
  const conds = conditionsOf(o);
  const newIdx = conds.flatMap((c, i) => (c.type === type ? [i] : []));
  const oldConds = ofType(old, type);
  if (newIdx.length !== oldConds.length) return;
  newIdx.forEach((at, i) => (conds[at] = oldConds[i]!));
  (o.status as Record<string, unknown>).conditions = conds;
}

function requestedDuration(o: KubeObject): string {
  const seconds = optNum(obj(o.spec).expirationSeconds);
  return seconds === undefined ? '<none>' : humanDuration(seconds * 1000);
}

/** The CONDITION cell, in upstream's order of precedence. */
export function csrCondition(o: KubeObject): string {
  const types = new Set(conditionsOf(o).map((c) => c.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (str(obj(o.status).certificate) !== '') s += ',Issued';
  return s;
}

export const certificateSigningRequestResource: ResourceType = {
  group: CERTIFICATES_GROUP,
  version: 'v1',
  resource: 'certificatesigningrequests',
  kind: 'CertificateSigningRequest',
  listKind: 'CertificateSigningRequestList',
  singular: 'certificatesigningrequest',
  namespaced: false,
  shortNames: ['csr'],
  categories: [],
  subresources: ['status', 'approval'],
  fieldSelectors: { 'spec.signerName': (o) => str(obj(o.spec).signerName) },
  table: {
    columns: [
      nameColumn,
      column('Age', 'string', 'CreationTimestamp is a timestamp representing the server time when this object was created.'),
      column('SignerName', 'string', 'signerName indicates the requested signer, and is a qualified name.'),
      column('Requestor', 'string', 'username contains the name of the user that created the CertificateSigningRequest.'),
      column('RequestedDuration', 'string', 'expirationSeconds is the requested duration of validity of the issued certificate.'),
      column('Condition', 'string', 'conditions applied to the request. Known conditions are "Approved", "Denied", and "Failed".'),
    ],
    cells: (o, now) => [o.metadata?.name ?? '', age(o, now), orNone(str(obj(o.spec).signerName)), str(obj(o.spec).username), requestedDuration(o), csrCondition(o)],
  },
  hasGeneration: false,
  defaults: () => {},
  prepareForCreate: (o, requester) => recordRequester(o, requester),
  // The spec never changes after create, and the status only through its subresources.
  prepareForUpdate: (o, old) => {
    o.spec = old.spec;
    if (old.status === undefined) delete o.status;
    else o.status = old.status;
  },
  prepareForSubresourceUpdate: (subresource, o, old, now) => {
    o.spec = old.spec;
    if (subresource === 'status') {
      preserveConditions(o, old, 'Approved');
      preserveConditions(o, old, 'Denied');
      stampConditions(o, old, now);
    } else if (subresource === 'approval') {
      stampConditions(o, old, now);
      const conditions = obj(o.status).conditions;
      o.status = { ...obj(old.status) };
      if (conditions === undefined) delete (o.status as Record<string, unknown>).conditions;
      else (o.status as Record<string, unknown>).conditions = conditions;
    }
  },
  validate: (o, old) => (old ? validateUpdate(o, old, { settingApproval: false, settingCertificate: false }) : validateObject(o, undefined)),
  validateSubresourceUpdate: (subresource, o, old) => validateUpdate(o, old, { settingApproval: subresource === 'approval', settingCertificate: subresource === 'status' }),
};
