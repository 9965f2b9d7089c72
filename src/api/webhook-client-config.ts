// How the API server reaches a webhook (admissionregistration's and apiextensions' WebhookClientConfig,
// the same struct in both groups): a URL, or a Service in the cluster with an optional path and port.
// Its validation and default are upstream's shared ones (apiserver's util/webhook), so an admission
// webhook and a CRD's conversion webhook are checked the same way.
import { field } from './errors.js';
import type { StatusCause } from './types.js';
import { isObject, obj, optNum, optStr, str } from './kinds/json.js';
import { childPath, indexPath, isDNS1035Label, isDNS1123Subdomain, isValidPortNum } from './validation.js';

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  /** Defaults to 443, as upstream's. */
  port?: number;
}

export interface WebhookClientConfig {
  url?: string;
  service?: ServiceReference;
  /** Base64 PEM of the CA that signed the webhook's serving certificate; the system roots when absent. */
  caBundle?: string;
}

export const DEFAULT_WEBHOOK_PORT = 443;

/** Fills the service port, as upstream's defaulting does for both groups. */
export function defaultWebhookClientConfig(cc: unknown): void {
  if (!isObject(cc) || !isObject(cc.service)) return;
  if (cc.service.port === undefined || cc.service.port === null) cc.service.port = DEFAULT_WEBHOOK_PORT;
}

const URL_FORM = '; desired format: https://host[/path]';

/** Upstream ValidateWebhookURL: an absolute https URL without user, query or fragment. */
export function validateWebhookUrl(path: string, value: string): StatusCause[] {
  let u: URL;
  try {
    u = new URL(value);
  } catch (e) {
    return [field.required(path, `url must be a valid URL: ${e instanceof Error ? e.message : String(e)}${URL_FORM}`)];
  }
  const out: StatusCause[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') out.push(field.invalid(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (u.host === '') out.push(field.invalid(path, u.host, `host must be provided${URL_FORM}`));
  if (u.username !== '' || u.password !== '') out.push(field.invalid(path, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  if (u.hash !== '') out.push(field.invalid(path, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (u.search !== '') out.push(field.invalid(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return out;
}

/** Upstream ValidateWebhookService: name and namespace, a valid port, a path of DNS-subdomain segments. */
export function validateWebhookService(path: string, svc: Record<string, unknown>): StatusCause[] {
  const out: StatusCause[] = [];
  if (str(svc.name) === '') out.push(field.required(childPath(path, 'name'), 'service name is required'));
  if (str(svc.namespace) === '') out.push(field.required(childPath(path, 'namespace'), 'service namespace is required'));
  const port = optNum(svc.port) ?? DEFAULT_WEBHOOK_PORT;
  const portErrors = isValidPortNum(port);
  if (portErrors.length > 0) out.push(field.invalid(childPath(path, 'port'), port, `port is not valid: ${portErrors.join(', ')}`));
  const urlPath = optStr(svc.path);
  if (urlPath === undefined || urlPath === '' || urlPath === '/') return out;
  const p = childPath(path, 'path');
  if (urlPath === '//') return [...out, field.invalid(p, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) out.push(field.invalid(p, urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') return void out.push(field.invalid(p, urlPath, `segment[${i}] may not be empty`));
    for (const failure of isDNS1123Subdomain(step)) out.push(field.invalid(p, urlPath, `segment[${i}]: ${failure}`));
  });
  return out;
}

/** Exactly one of url and service, each valid (`path` is the clientConfig's field path). */
export function validateWebhookClientConfig(path: string, cc: unknown): StatusCause[] {
  const c = obj(cc);
  const hasUrl = typeof c.url === 'string';
  const hasService = isObject(c.service);
  if (hasUrl === hasService) return [field.required(path, 'exactly one of url or service is required')];
  if (hasUrl) return validateWebhookUrl(childPath(path, 'url'), c.url as string);
  return validateWebhookService(childPath(path, 'service'), c.service as Record<string, unknown>);
}

/**
 * Upstream's validateAdmissionReviewVersions and validateConversionReviewVersions, one rule: DNS-1035
 * labels without repeats, and, when `requireRecognized` (an update keeps a stored list this server
 * no longer knows), at least one of `accepted`. `requiredDetail` is what an empty list is told.
 */
export function validateReviewVersions(path: string, versions: readonly string[], accepted: readonly string[], requireRecognized: boolean, requiredDetail?: string): StatusCause[] {
  if (versions.length === 0) return [field.required(path, requiredDetail)];
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) return void out.push(field.invalid(indexPath(path, i), v, 'duplicate version'));
    seen.add(v);
    for (const e of isDNS1035Label(v)) out.push(field.invalid(indexPath(path, i), v, e));
  });
  if (requireRecognized && !versions.some((v) => accepted.includes(v))) out.push(field.invalid(path, versions, `must include at least one of ${accepted.join(', ')}`));
  return out;
}
