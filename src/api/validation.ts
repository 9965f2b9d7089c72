// Validation primitives with upstream's exact wording (apimachinery util/validation and
// api/validation), plus ObjectMeta create/update rules. Kind-specific rules live in src/api/kinds/.
import { isIP } from 'node:net';
import { field } from './errors.js';
import type { StatusCause } from './types.js';
import { arr, isObject, obj, semanticEqual, str, strMap } from './kinds/json.js';

// ---------------------------------------------------------------------------------------------
// Field paths: "spec.containers[0].name", "data[key]".

export function childPath(parent: string, name: string): string {
  return parent ? `${parent}.${name}` : name;
}
export function indexPath(parent: string, i: number): string {
  return `${parent}[${i}]`;
}
export function keyPath(parent: string, key: string): string {
  return `${parent}[${key}]`;
}

// ---------------------------------------------------------------------------------------------
// Causes whose bad value needs Go's %#v rendering (maps, slices, structs), which the generic
// helpers in errors.ts do not produce.

export function invalidRendered(path: string, rendered: string, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', field: path, message: `Invalid value: ${rendered}: ${detail}` };
}
export function duplicateRendered(path: string, rendered: string, detail = ''): StatusCause {
  return { reason: 'FieldValueDuplicate', field: path, message: `Duplicate value: ${rendered}${detail ? `: ${detail}` : ''}` };
}
export function notSupportedRendered(path: string, rendered: string, valid: string[]): StatusCause {
  return {
    reason: 'FieldValueNotSupported',
    field: path,
    message: `Unsupported value: ${rendered}: supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}`,
  };
}
export function notFound(path: string, value: unknown): StatusCause {
  return { reason: 'FieldValueNotFound', field: path, message: `Not found: ${goValue(value)}` };
}

/** Go's %q / %v / %#v rendering for the JSON shapes we pass as bad values. */
export function goValue(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((e) => typeof e === 'string')) return goStringSlice(v as string[]);
  if (isObject(v) && Object.values(v).every((e) => typeof e === 'string')) return goStringMap(v as Record<string, string>);
  return JSON.stringify(v);
}

export function goStringMap(m: Record<string, string> | undefined | null): string {
  if (!m) return 'map[string]string(nil)';
  const entries = Object.keys(m)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`);
  return `map[string]string{${entries.join(', ')}}`;
}

export function goStringSlice(a: string[] | undefined | null): string {
  if (!a) return '[]string(nil)';
  return `[]string{${a.map((s) => JSON.stringify(s)).join(', ')}}`;
}

/** A metav1.LabelSelector as Go prints it in "field is immutable" errors. */
export function goLabelSelector(sel: unknown): string {
  if (!isObject(sel)) return 'null';
  const ml = isObject(sel.matchLabels) ? goStringMap(strMap(sel.matchLabels)) : 'map[string]string(nil)';
  const exprs = Array.isArray(sel.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions
        .map((e) => {
          const r = obj(e);
          const values = Array.isArray(r.values) ? goStringSlice(arr(r.values).map(str)) : '[]string(nil)';
          return `v1.LabelSelectorRequirement{Key:${JSON.stringify(str(r.key))}, Operator:${JSON.stringify(str(r.operator))}, Values:${values}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${exprs}}`;
}

/** An int-or-string value as Go's %#v prints intstr.IntOrString. */
export function goIntOrString(v: unknown): string {
  if (typeof v === 'number') return `intstr.IntOrString{Type:0, IntVal:${v}, StrVal:""}`;
  return `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(str(v))}}`;
}

/** A timestamp as Go's time.Time String() prints it (UTC). */
export function goTime(v: unknown): string {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) return '0001-01-01 00:00:00 +0000 UTC';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000 UTC`;
}

// ---------------------------------------------------------------------------------------------
// String format checks (apimachinery util/validation). Each returns upstream's messages.

export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}
export const EMPTY_ERROR = 'must be non-empty';

export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QNAME_RE = new RegExp(`^${QNAME_FMT}$`);
const QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QNAME_RE.test(name)) errs.push(`name part ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is not a valid label can only be wrong because of its dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

const WILDCARD_DNS1123_SUBDOMAIN_FMT = `\\*\\.${DNS1123_SUBDOMAIN_FMT}`;
const WILDCARD_DNS1123_SUBDOMAIN_RE = new RegExp(`^${WILDCARD_DNS1123_SUBDOMAIN_FMT}$`);

/** A host such as "*.example.com" (Ingress rule and TLS hosts). */
export function isWildcardDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!WILDCARD_DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
        WILDCARD_DNS1123_SUBDOMAIN_FMT,
        '*.example.com',
      ),
    );
  }
  return errs;
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH_RE = new RegExp(`^${HTTP_PATH_FMT}$`);

/** A domain-prefixed path such as "acme.io/ingress-controller" (IngressClass controller). */
export function validateDomainPrefixedPath(value: string, path: string): StatusCause[] {
  if (value.length === 0) return [field.required(path)];
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return [field.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const host = value.slice(0, slash);
  const rest = value.slice(slash + 1);
  const out = isDNS1123Subdomain(host).map((m) => field.invalid(path, host, m));
  if (!HTTP_PATH_RE.test(rest)) out.push(field.invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
  return out;
}

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_RE = new RegExp(`^${CONFIG_KEY_FMT}$`);

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!CONFIG_KEY_RE.test(value)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function isValidPortNum(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidIP(value: string): boolean {
  return isIP(value) !== 0;
}
export const INVALID_IP_MESSAGE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

const PERCENT_FMT = '[0-9]+%';
export function isValidPercent(value: string): string[] {
  return new RegExp(`^${PERCENT_FMT}$`).test(value)
    ? []
    : [regexError("a valid percent string must be a numeric string followed by an ending '%'", PERCENT_FMT, '1%', '93%')];
}

/** The relaxed environment-variable name rule (on by default since 1.32). */
export function isEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (value.length === 0) errs.push(`environment variable name ${EMPTY_ERROR}`);
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if (c > 126 || c < 32 || ch === '=') {
      errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Object names.

/** How a kind's metadata.name is checked; `prefix` is true when checking generateName. */
export type NameValidator = (name: string, prefix: boolean) => string[];

// Upstream masks a trailing dash of a generateName prefix this way (it also drops the character
// before the dash), so "ab-" is checked as "a". Reproduced as is.
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) => isDNS1035Label(prefix ? maskTrailingDash(name) : name);

/** Any name usable as a URL path segment (what kinds without their own rule, like Event, get). */
export const pathSegmentName: NameValidator = (name, prefix) => {
  if (!prefix) {
    if (name === '.' || name === '..') return [`may not be '${name}'`];
  }
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
};

// ---------------------------------------------------------------------------------------------
// Field-level helpers shared by the kinds.

export function validateNonnegative(value: number, path: string): StatusCause[] {
  return value < 0 ? [field.invalid(path, value, 'must be greater than or equal to 0')] : [];
}

export function validateDNS1123Label(value: string, path: string): StatusCause[] {
  return isDNS1123Label(value).map((m) => field.invalid(path, value, m));
}

export function validateDNS1123Subdomain(value: string, path: string): StatusCause[] {
  return isDNS1123Subdomain(value).map((m) => field.invalid(path, value, m));
}

export function validateQualifiedName(value: string, path: string): StatusCause[] {
  return isQualifiedName(value).map((m) => field.invalid(path, value, m));
}

export function validateLabelName(key: string, path: string): StatusCause[] {
  return isQualifiedName(key).map((m) => field.invalid(path, key, m));
}

/** Keys and values of a label map; errors are reported at the map's path, as upstream does. */
export function validateLabels(labels: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (labels === undefined || labels === null) return out;
  if (!isObject(labels)) return [field.typeInvalid(path, labels, 'must be a map of string keys to string values')];
  for (const [k, v] of Object.entries(labels)) {
    out.push(...validateLabelName(k, path));
    if (typeof v !== 'string') {
      out.push(field.typeInvalid(keyPath(path, k), v, 'must be a string'));
      continue;
    }
    out.push(...isValidLabelValue(v).map((m) => field.invalid(path, v, m)));
  }
  return out;
}

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export function validateAnnotations(annotations: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (annotations === undefined || annotations === null) return out;
  if (!isObject(annotations)) return [field.typeInvalid(path, annotations, 'must be a map of string keys to string values')];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    // The key rule is a qualified name where case does not matter.
    out.push(...isQualifiedName(k.toLowerCase()).map((m) => field.invalid(path, k, m)));
    if (typeof v !== 'string') out.push(field.typeInvalid(keyPath(path, k), v, 'must be a string'));
    total += Buffer.byteLength(k) + Buffer.byteLength(typeof v === 'string' ? v : '');
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) out.push(field.tooLong(path, '', TOTAL_ANNOTATION_SIZE_LIMIT));
  return out;
}

export function validateOwnerReferences(refs: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  let firstController = '';
  for (const r of arr(refs)) {
    const ref = obj(r);
    const apiVersion = str(ref.apiVersion);
    const kind = str(ref.kind);
    const gv = parseGroupVersion(apiVersion);
    if (!gv.version) out.push(field.invalid(childPath(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) out.push(field.invalid(childPath(path, 'kind'), kind, 'kind must not be empty'));
    if (!str(ref.name)) out.push(field.invalid(childPath(path, 'name'), str(ref.name), 'name must not be empty'));
    if (!str(ref.uid)) out.push(field.invalid(childPath(path, 'uid'), str(ref.uid), 'uid must not be empty'));
    if (gv.group === '' && gv.version === 'v1' && kind === 'Event') {
      out.push(invalidRendered(path, JSON.stringify(ref), '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.controller === true) {
      const name = `${kind}/${str(ref.name)}`;
      if (firstController) {
        out.push(
          invalidRendered(
            path,
            JSON.stringify(refs),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${name}`,
          ),
        );
      } else {
        firstController = name;
      }
    }
  }
  return out;
}

function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === '') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0]! };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return { group: '', version: '' };
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

export function validateFinalizers(finalizers: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const list = arr(finalizers).map(str);
  for (const f of list) out.push(...isQualifiedName(f).map((m) => field.invalid(path, f, m)));
  if (list.includes('orphan') && list.includes('foregroundDeletion')) {
    out.push(invalidRendered(path, goStringSlice(list), 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return out;
}

/** Core types also require unqualified finalizer names to be one of the standard ones. */
function validateKubeFinalizerNames(finalizers: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  arr(finalizers).forEach((f, i) => {
    const name = str(f);
    if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
      out.push(field.invalid(indexPath(path, i), name, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return out;
}

function validateManagedFields(entries: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  arr(entries).forEach((e, i) => {
    const m = obj(e);
    const p = indexPath(path, i);
    const op = str(m.operation);
    if (op !== 'Apply' && op !== 'Update') out.push(field.invalid(childPath(p, 'operation'), op, 'must be `Apply` or `Update`'));
    const ft = str(m.fieldsType);
    if (ft && ft !== 'FieldsV1') out.push(field.invalid(childPath(p, 'fieldsType'), ft, 'must be `FieldsV1`'));
    const manager = str(m.manager);
    if (manager.length > 128) out.push(field.tooLong(childPath(p, 'manager'), manager, 128));
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// ObjectMeta.

/**
 * Create-time metadata rules (upstream ValidateObjectMeta plus the core finalizer check). Expects
 * generateName to have been turned into a name already, as upstream does.
 */
export function validateObjectMeta(meta: unknown, namespaced: boolean, nameRule: NameValidator, path = 'metadata', generic = false): StatusCause[] {
  const m = obj(meta);
  const out: StatusCause[] = [];
  const generateName = str(m.generateName);
  if (generateName) {
    out.push(...nameRule(generateName, true).map((msg) => field.invalid(childPath(path, 'generateName'), generateName, msg)));
  }
  const name = str(m.name);
  if (!name) out.push(field.required(childPath(path, 'name'), 'name or generateName is required'));
  else out.push(...nameRule(name, false).map((msg) => field.invalid(childPath(path, 'name'), name, msg)));
  const namespace = str(m.namespace);
  if (namespaced) {
    if (!namespace) out.push(field.required(childPath(path, 'namespace')));
    else out.push(...nameIsDNSLabel(namespace, false).map((msg) => field.invalid(childPath(path, 'namespace'), namespace, msg)));
  } else if (namespace) {
    out.push(field.forbidden(childPath(path, 'namespace'), 'not allowed on this type'));
  }
  if (typeof m.generation === 'number') out.push(...validateNonnegative(m.generation, childPath(path, 'generation')));
  out.push(...validateLabels(m.labels, childPath(path, 'labels')));
  out.push(...validateAnnotations(m.annotations, childPath(path, 'annotations')));
  out.push(...validateOwnerReferences(m.ownerReferences, childPath(path, 'ownerReferences')));
  out.push(...validateFinalizers(m.finalizers, childPath(path, 'finalizers')));
  out.push(...validateManagedFields(m.managedFields, childPath(path, 'managedFields')));
  if (!generic) out.push(...validateKubeFinalizerNames(m.finalizers, childPath(path, 'finalizers')));
  return out;
}

/**
 * Update-time metadata rules (upstream ValidateObjectMetaUpdate). The "resourceVersion must be
 * specified" rule is left to the API server, which resolves unconditional updates before this runs.
 */
export function validateObjectMetaUpdate(newMeta: unknown, oldMeta: unknown, path = 'metadata', generic = false): StatusCause[] {
  const n = obj(newMeta);
  const o = obj(oldMeta);
  const out: StatusCause[] = [];
  if (o.deletionTimestamp) {
    const oldSet = new Set(arr(o.finalizers).map(str));
    const extra = [...new Set(arr(n.finalizers).map(str))].filter((f) => !oldSet.has(f)).sort();
    if (extra.length > 0) {
      out.push(
        field.forbidden(
          childPath(path, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`,
        ),
      );
    }
  }
  const newGen = typeof n.generation === 'number' ? n.generation : 0;
  const oldGen = typeof o.generation === 'number' ? o.generation : 0;
  if (newGen < oldGen) out.push(field.invalid(childPath(path, 'generation'), newGen, 'must not be decremented'));

  const immutable = (key: string, render: (v: unknown) => string) => {
    if (!semanticEqual(n[key] ?? '', o[key] ?? '')) out.push(invalidRendered(childPath(path, key), render(n[key]), 'field is immutable'));
  };
  immutable('name', (v) => JSON.stringify(str(v)));
  immutable('namespace', (v) => JSON.stringify(str(v)));
  immutable('uid', (v) => JSON.stringify(str(v)));
  immutable('creationTimestamp', (v) => goTime(v));
  immutable('deletionTimestamp', (v) => (v ? goTime(v) : 'null'));
  immutable('deletionGracePeriodSeconds', (v) => (typeof v === 'number' ? String(v) : 'null'));

  out.push(...validateLabels(n.labels, childPath(path, 'labels')));
  out.push(...validateAnnotations(n.annotations, childPath(path, 'annotations')));
  out.push(...validateOwnerReferences(n.ownerReferences, childPath(path, 'ownerReferences')));
  out.push(...validateManagedFields(n.managedFields, childPath(path, 'managedFields')));
  if (!generic) out.push(...validateKubeFinalizerNames(n.finalizers, childPath(path, 'finalizers')));
  return out;
}

/**
 * Create or update metadata rules in one call, as every kind needs. `generic`: apimachinery's rules
 * alone, as for CustomResourceDefinitions and custom resources, whose unqualified finalizer names
 * need not be the standard ones.
 */
export function validateMeta(o: { metadata: unknown }, old: { metadata: unknown } | undefined, namespaced: boolean, nameRule: NameValidator, generic = false): StatusCause[] {
  return old ? validateObjectMetaUpdate(o.metadata, old.metadata, 'metadata', generic) : validateObjectMeta(o.metadata, namespaced, nameRule, 'metadata', generic);
}

/** Upstream ValidateImmutableField with a caller-chosen rendering of the new value. */
export function validateImmutable(newVal: unknown, oldVal: unknown, path: string, render: (v: unknown) => string = goValue): StatusCause[] {
  return semanticEqual(newVal, oldVal) ? [] : [invalidRendered(path, render(newVal), 'field is immutable')];
}

// ---------------------------------------------------------------------------------------------
// Int-or-percent values (rolling update knobs, PDB budgets).

/** The integer an int-or-percent carries (percent strings give their number); undefined if malformed. */
export function intOrPercentValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (/^-?\d+%$/.test(v)) return Number(v.slice(0, -1));
    if (/^-?\d+$/.test(v)) return Number(v);
  }
  return undefined;
}

export function validatePositiveIntOrPercent(v: unknown, path: string): StatusCause[] {
  if (typeof v === 'string') return isValidPercent(v).map((m) => invalidRendered(path, goIntOrString(v), m));
  if (typeof v === 'number') return validateNonnegative(v, path);
  if (v === undefined || v === null) return [];
  return [field.typeInvalid(path, v, 'must be an integer or a percentage string')];
}

export function isNotMoreThan100Percent(v: unknown, path: string): StatusCause[] {
  if (typeof v !== 'string' || !v.endsWith('%')) return [];
  const n = intOrPercentValue(v);
  return n !== undefined && n > 100 ? [invalidRendered(path, goIntOrString(v), 'must not be greater than 100%')] : [];
}
