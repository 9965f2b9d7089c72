// Every kind skiff serves is described once, by its protobuf messages (./messages.ts, mirroring
// upstream's generated.proto and Go types field by field, with options for what the .proto
// language cannot say). Protobuf decoding, Go's JSON type checks and the known-field trees of
// field validation are all read off this one parsed schema.
import protobuf from 'protobufjs';
import type { Root, Type } from 'protobufjs';
import { META_V1_PACKAGE, PROTO_SOURCES, SUPPORTED_KINDS } from './messages.js';

/** Messages whose JSON form is not their fields (a string, a number or raw JSON), by full name. */
export const TIME = '.k8s.io.apimachinery.pkg.apis.meta.v1.Time';
export const MICRO_TIME = '.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime';
export const DURATION = '.k8s.io.apimachinery.pkg.apis.meta.v1.Duration';
export const FIELDS_V1 = '.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1';
export const QUANTITY = '.k8s.io.apimachinery.pkg.api.resource.Quantity';
export const INT_OR_STRING = '.k8s.io.apimachinery.pkg.util.intstr.IntOrString';
export const RAW_EXTENSION = '.k8s.io.apimachinery.pkg.runtime.RawExtension';
export const JSON_SCHEMA_PROPS = '.k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
/** A requester's extra attribute values: a message on the wire, a list of strings in JSON. */
export const EXTRA_VALUE = '.k8s.io.api.certificates.v1.ExtraValue';

/** Messages whose JSON is a string, a number or raw JSON, not their fields: nothing inside them to check or merge. */
export const OPAQUE_MESSAGES: ReadonlySet<string> = new Set([TIME, MICRO_TIME, DURATION, FIELDS_V1, QUANTITY, INT_OR_STRING, RAW_EXTENSION, JSON_SCHEMA_PROPS, EXTRA_VALUE]);

let cachedRoot: Root | undefined;

/** The parsed schema, parsed on first use. */
export function protobufSchema(): Root {
  if (!cachedRoot) {
    const root = new protobuf.Root();
    for (const source of PROTO_SOURCES) protobuf.parse(source, root, { keepCase: true });
    root.resolveAll();
    cachedRoot = root;
  }
  return cachedRoot;
}

/** The message of a kind, or undefined when the schema does not describe it. */
export function messageFor(apiVersion: string, kind: string): Type | undefined {
  // Asked several times per write (schemas, field validation): the schema is fixed, so looked up once.
  const key = `${apiVersion}/${kind}`;
  if (messages.has(key)) return messages.get(key);
  const found = lookupMessage(apiVersion, kind);
  messages.set(key, found);
  return found;
}

const messages = new Map<string, Type | undefined>();

function lookupMessage(apiVersion: string, kind: string): Type | undefined {
  if (kind === 'DeleteOptions') return protobufSchema().lookupType(`${META_V1_PACKAGE}.DeleteOptions`);
  const entry = SUPPORTED_KINDS[apiVersion];
  if (!entry || !entry.kinds.includes(kind)) return undefined;
  return protobufSchema().lookupType(`${entry.pkg}.${kind}`);
}

/** Whether a message is a kind's (its objects carry apiVersion and kind, also where embedded). */
export function isKindMessage(type: Type): boolean {
  const pkg = type.parent?.fullName.replace(/^\./, '');
  return Object.values(SUPPORTED_KINDS).some((e) => e.pkg === pkg && e.kinds.includes(type.name));
}
