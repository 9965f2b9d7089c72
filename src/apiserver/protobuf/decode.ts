// Decodes application/vnd.kubernetes.protobuf request bodies (kubectl >= 1.32 typed clients) into
// the JSON object a JSON client would have sent for the same request.
//
// Wire format: the 4 magic bytes "k8s\0", then a runtime.Unknown whose typeMeta names the kind and
// whose raw bytes hold the kind's message from k8s.io/api. Messages come from src/api/schema/.
//
// Zero-value rule. gogo-protobuf writes every non-pointer Go field, zero or not (stdin: false,
// generation: 0, resources: {limits: {}, requests: {}}), and writes pointer fields only when non-nil.
// Go's JSON encoder, which produced what a JSON client sends, omits zero `omitempty` fields and nil
// pointers. So, per field:
//   - absent on the wire                       -> omitted;
//   - scalar (string/number/bool/bytes) zero   -> omitted, unless the field is marked (ptr) or (keep),
//                                                 which means the zero was set on purpose (replicas: 0);
//   - nested message that converts to {}       -> omitted, unless marked (ptr) (emptyDir: {} is a choice);
//   - empty list or map                        -> omitted; map entries are kept even when the value is "";
//   - list elements                            -> always kept, even {} or "", so indexes stay aligned.
// Known difference from Go's JSON: non-pointer structs Go would print as {} (strategy: {}, status: {})
// and zero scalars without omitempty that carry no meaning (containerPort: 0) are left out.
import { errorText } from '../../util/error-text.js';
import protobuf from 'protobufjs';
import type { Message, Type, Field } from 'protobufjs';
import { StatusError, badRequest } from '../../api/errors.js';
import type { KubeObject, ObjectMeta } from '../../api/types.js';
import { DURATION, EXTRA_VALUE, FIELDS_V1, INT_OR_STRING, JSON_SCHEMA_PROPS, MICRO_TIME, QUANTITY, RAW_EXTENSION, TIME, messageFor, protobufSchema } from '../../api/schema/root.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
/** "k8s\0": every Kubernetes protobuf payload starts with it. */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** runtime.Unknown as protobufjs decodes it (absent fields read their proto2 defaults). */
interface UnknownEnvelope {
  typeMeta?: { apiVersion?: string; kind?: string } | null;
  raw?: Uint8Array;
  contentEncoding?: string;
  contentType?: string;
}

/**
 * Decodes a protobuf request body into the JSON object a JSON client would send, with apiVersion
 * and kind set from the envelope. Malformed input, another magic or an unsupported kind throw a
 * 400 BadRequest StatusError.
 */
export function decodeProtobufObject(body: Uint8Array): KubeObject {
  if (body.length < PROTOBUF_MAGIC.length || !PROTOBUF_MAGIC.every((b, i) => body[i] === b)) {
    throw badRequest('the protobuf body does not start with the Kubernetes magic prefix "k8s\\x00"');
  }
  const unknownType = protobufSchema().lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  let envelope: UnknownEnvelope;
  try {
    envelope = unknownType.decode(body.subarray(PROTOBUF_MAGIC.length)) as unknown as UnknownEnvelope;
  } catch (err) {
    throw badRequest(`the protobuf envelope (runtime.Unknown) is malformed: ${errorText(err)}`);
  }

  const apiVersion = typeof envelope.typeMeta?.apiVersion === 'string' ? envelope.typeMeta.apiVersion : '';
  const kind = typeof envelope.typeMeta?.kind === 'string' ? envelope.typeMeta.kind : '';
  if (!kind) throw badRequest('the protobuf envelope does not name a kind (typeMeta.kind is empty)');
  if (envelope.contentEncoding) {
    throw badRequest(`protobuf content encoding ${JSON.stringify(envelope.contentEncoding)} is not supported`);
  }
  if (envelope.contentType && envelope.contentType !== PROTOBUF_CONTENT_TYPE) {
    throw badRequest(`protobuf envelope content type ${JSON.stringify(envelope.contentType)} is not supported`);
  }

  const type = messageFor(apiVersion, kind);
  if (!type) {
    throw badRequest(
      `decoding ${kind} (apiVersion ${JSON.stringify(apiVersion)}) from ${PROTOBUF_CONTENT_TYPE} is not supported by this server; send it as application/json`,
    );
  }

  let object: JsonObject;
  try {
    const raw = envelope.raw instanceof Uint8Array ? envelope.raw : new Uint8Array(0);
    object = convertMessage(type, type.decode(raw), kind);
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw badRequest(`unable to decode the protobuf ${kind} body: ${errorText(err)}`);
  }

  const { metadata, ...rest } = object;
  return { apiVersion, kind, metadata: (isObject(metadata) ? metadata : {}) as ObjectMeta, ...rest };
}

// ---- conversion ----

const INT64_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

function option(field: Field, name: string): boolean {
  return field.options?.[`(${name})`] === true;
}

function convertMessage(type: Type, message: Message, path: string): JsonObject {
  const values = message as unknown as Record<string, unknown>;
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    const value = values[field.name];
    const fieldPath = `${path}.${field.name}`;
    if (field.map) {
      const entries = Object.entries((value ?? {}) as Record<string, unknown>);
      if (entries.length === 0) continue;
      const map: JsonObject = {};
      for (const [key, entry] of entries) map[key] = convertElement(field, entry, `${fieldPath}[${key}]`);
      out[field.name] = map;
      continue;
    }
    if (field.repeated) {
      const list = Array.isArray(value) ? value : [];
      if (list.length === 0) continue;
      out[field.name] = list.map((entry, i) => convertElement(field, entry, `${fieldPath}[${i}]`));
      continue;
    }
    // proto2 presence: protobufjs sets an own property only for fields that were on the wire.
    if (!Object.prototype.hasOwnProperty.call(values, field.name) || value === null || value === undefined) continue;
    const keepZero = option(field, 'ptr') || option(field, 'keep');
    const converted = convertSingle(field, value, keepZero, fieldPath);
    if (converted === undefined) continue;
    if (option(field, 'inline') && isObject(converted)) Object.assign(out, converted);
    else out[field.name] = converted;
  }
  return out;
}

/** A list element or map value: always kept, so zero values survive. */
function convertElement(field: Field, value: unknown, path: string): Json {
  const converted = convertSingle(field, value, true, path);
  return converted === undefined ? null : converted;
}

function convertSingle(field: Field, value: unknown, keepZero: boolean, path: string): Json | undefined {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return convertNested(resolved, value as Message, keepZero, path);
  if (resolved) throw new Error(`${path}: enum fields are not expected in Kubernetes messages`);
  const scalar = convertScalar(field.type, value, path);
  if (!keepZero && (scalar === 0 || scalar === false || scalar === '')) return undefined;
  return scalar;
}

function convertScalar(protoType: string, value: unknown, path: string): Json {
  if (INT64_TYPES.has(protoType)) return longToNumber(value, path);
  if (protoType === 'bytes') return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  throw new Error(`${path}: unexpected ${protoType} value`);
}

function convertNested(type: Type, message: Message, keepZero: boolean, path: string): Json | undefined {
  const values = message as unknown as Record<string, unknown>;
  switch (type.fullName) {
    case TIME:
    case MICRO_TIME: {
      // gogo writes a zero metav1.Time as an empty message; upstream reads 0/0 back as the zero time.
      const seconds = longToNumber(values['seconds'] ?? 0, path);
      const nanos = typeof values['nanos'] === 'number' ? values['nanos'] : 0;
      if (seconds === 0 && nanos === 0) return undefined;
      return formatTime(seconds, type.fullName === MICRO_TIME ? nanos : undefined, path);
    }
    case DURATION: {
      const ns = longToBigInt(values['duration'] ?? 0);
      if (ns === 0n && !keepZero) return undefined;
      return goDuration(ns);
    }
    case QUANTITY: {
      const text = typeof values['string'] === 'string' ? values['string'] : '';
      return text === '' ? undefined : text;
    }
    case INT_OR_STRING: {
      const isString = longToNumber(values['type'] ?? 0, path) === 1;
      const result: Json = isString
        ? (typeof values['strVal'] === 'string' ? values['strVal'] : '')
        : (typeof values['intVal'] === 'number' ? values['intVal'] : 0);
      if (!keepZero && (result === 0 || result === '')) return undefined;
      return result;
    }
    case EXTRA_VALUE:
      return Array.isArray(values['items']) ? (values['items'] as string[]) : [];
    case RAW_EXTENSION:
      return rawJson(values['raw'], path);
    case FIELDS_V1:
      return rawJson(values['Raw'], path);
    case JSON_SCHEMA_PROPS:
      // Carried whole in the messages (see APIEXTENSIONS_V1_PROTO), so it cannot be read field by field.
      throw new Error(`${path}: protobuf-encoded schemas are not supported, send the CustomResourceDefinition as JSON`);
    default: {
      const object = convertMessage(type, message, path);
      if (!keepZero && Object.keys(object).length === 0) return undefined;
      return object;
    }
  }
}

// Bounds recursion through RawExtensions that embed further protobuf objects.
let embeddedDepth = 0;
const MAX_EMBEDDED_DEPTH = 3;

/** RawExtension / FieldsV1 bytes hold JSON, or a nested protobuf object with its own magic. */
function rawJson(raw: unknown, path: string): Json | undefined {
  if (!(raw instanceof Uint8Array) || raw.length === 0) return undefined;
  if (raw.length >= PROTOBUF_MAGIC.length && PROTOBUF_MAGIC.every((b, i) => raw[i] === b)) {
    if (embeddedDepth >= MAX_EMBEDDED_DEPTH) throw new Error(`${path}: embedded objects are nested too deeply`);
    embeddedDepth++;
    try {
      return decodeProtobufObject(raw) as unknown as Json;
    } finally {
      embeddedDepth--;
    }
  }
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8')) as Json;
  } catch {
    throw new Error(`${path}: embedded raw bytes are neither JSON nor a Kubernetes protobuf object`);
  }
}

function longToBigInt(value: unknown): bigint {
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  if (typeof value === 'bigint') return value;
  return BigInt(String(value)); // protobufjs Long: toString() gives the signed decimal
}

function longToNumber(value: unknown, path: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { toNumber?: unknown }).toNumber === 'function') {
    return (value as { toNumber(): number }).toNumber();
  }
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  throw new Error(`${path}: unexpected 64-bit integer value`);
}

/** RFC 3339 in UTC like Go's metav1.Time (seconds) or metav1.MicroTime (always 6 fraction digits). */
function formatTime(seconds: number, nanos: number | undefined, path: string): string {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw new Error(`${path}: timestamp ${seconds} is out of range`);
  const base = date.toISOString().slice(0, 19);
  if (nanos === undefined) return `${base}Z`;
  return `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/** Go's time.Duration.String(): "0s", "1.5s", "1m30s", "1h0m0s", "250ms". */
function goDuration(total: bigint): string {
  if (total === 0n) return '0s';
  const negative = total < 0n;
  let rest = negative ? -total : total;
  let text: string;
  if (rest < 1_000_000_000n) {
    const [unit, size] = rest < 1_000n ? ['ns', 1n] : rest < 1_000_000n ? ['µs', 1_000n] : ['ms', 1_000_000n];
    text = decimal(rest, size) + unit;
  } else {
    const hours = rest / 3_600_000_000_000n;
    rest %= 3_600_000_000_000n;
    const minutes = rest / 60_000_000_000n;
    rest %= 60_000_000_000n;
    text = `${decimal(rest, 1_000_000_000n)}s`;
    if (hours > 0n) text = `${hours}h${minutes}m${text}`;
    else if (minutes > 0n) text = `${minutes}m${text}`;
  }
  return negative ? `-${text}` : text;
}

function decimal(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const fraction = value % unit;
  if (fraction === 0n) return String(whole);
  const digits = String(fraction).padStart(String(unit).length - 1, '0').replace(/0+$/, '');
  return `${whole}.${digits}`;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

