// /openapi/v2: the Swagger 2.0 document. kubectl fetches it (as protobuf) to validate an object on
// the client when the OpenAPI v3 documents cannot vouch that the server validates fields of its
// kind. That is the case for `kind: List`, which `kubectl get -o yaml` writes and users apply back;
// without this document `kubectl apply|create -f list.yaml` stops with "the server could not find
// the requested resource".
//
// It carries every definition (the v3 documents' schemas, with #/definitions/ references), in
// JSON or in gnostic's protobuf form, whose schemas hold extensions as YAML text. kubectl validates
// the items of a List with them and explains from them with --output plaintext-openapiv2.
import protobuf from 'protobufjs';
import type { Type } from 'protobufjs';
import { stringify as toYaml } from 'yaml';
import { VERIFIABLE_QUERY_PARAMS, type PatchablePath } from './v3.js';

/**
 * The protobuf media types of gnostic's openapi_v2.Document that clients ask for (kubectl 1.27-1.33
 * asks for the first). The answer always carries the second: Go's mime parser, which client-go runs
 * on the Content-Type, refuses the '@'.
 */
const OPENAPI_V2_PROTOBUF = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
const OPENAPI_V2_PROTOBUF_ANSWER = OPENAPI_V2_PROTOBUF[1]!;

// The fields of gnostic's OpenAPIv2.proto (package openapi.v2) this document uses; field numbers
// are the contract. Of the paths, each object's PATCH is described with its kind and query
// parameters: kubectl before 1.27 reads them there to learn that the server does dry runs and
// field validation (a kubectl that finds no such parameter refuses --dry-run=server).
const OPENAPI_V2_PROTO = `
syntax = "proto3";
package openapi.v2;
message Info { string title = 1; string version = 2; }
message Paths { repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem { Operation put = 3; Operation patch = 8; }
message Operation { repeated ParametersItem parameters = 8; Responses responses = 9; repeated NamedAny vendor_extension = 13; }
message ParametersItem { oneof oneof { Parameter parameter = 1; } }
message Parameter { oneof oneof { NonBodyParameter non_body_parameter = 2; } }
message NonBodyParameter { oneof oneof { QueryParameterSubSchema query_parameter_sub_schema = 3; } }
message QueryParameterSubSchema { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 6; bool unique_items = 20; }
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; } }
message Response { string description = 1; }
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message Schema {
  string _ref = 1;
  string format = 2;
  string title = 3;
  string description = 4;
  Any default = 5;
  double multiple_of = 6;
  double maximum = 7;
  bool exclusive_maximum = 8;
  double minimum = 9;
  bool exclusive_minimum = 10;
  int64 max_length = 11;
  int64 min_length = 12;
  string pattern = 13;
  int64 max_items = 14;
  int64 min_items = 15;
  bool unique_items = 16;
  int64 max_properties = 17;
  int64 min_properties = 18;
  repeated string required = 19;
  repeated Any enum = 20;
  AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22;
  ItemsItem items = 23;
  repeated Schema all_of = 24;
  Properties properties = 25;
  Any example = 30;
  repeated NamedAny vendor_extension = 31;
}
message Definitions { repeated NamedSchema additional_properties = 1; }
message Document {
  string swagger = 1;
  Info info = 2;
  Paths paths = 8;
  Definitions definitions = 9;
}
`;

/** JSON Schema keywords and the gnostic Schema field that holds each as it is. */
const PLAIN_FIELDS: Record<string, string> = {
  format: 'format',
  title: 'title',
  description: 'description',
  multipleOf: 'multiple_of',
  maximum: 'maximum',
  exclusiveMaximum: 'exclusive_maximum',
  minimum: 'minimum',
  exclusiveMinimum: 'exclusive_minimum',
  maxLength: 'max_length',
  minLength: 'min_length',
  pattern: 'pattern',
  maxItems: 'max_items',
  minItems: 'min_items',
  uniqueItems: 'unique_items',
  maxProperties: 'max_properties',
  minProperties: 'min_properties',
  required: 'required',
};

/** The JSON type each plain keyword takes. */
const PLAIN_EXAMPLE: Record<string, unknown> = {
  format: '', title: '', description: '', pattern: '',
  multipleOf: 0, maximum: 0, minimum: 0, maxLength: 0, minLength: 0, maxItems: 0, minItems: 0, maxProperties: 0, minProperties: 0,
  exclusiveMaximum: false, exclusiveMinimum: false, uniqueItems: false,
};

function yamlAny(v: unknown): { yaml: string } {
  return { yaml: toYaml(v) };
}

function isSchema(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON schema as gnostic's Schema message (as a plain object for protobufjs). */
function gnosticSchema(s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const extensions: { name: string; value: { yaml: string } }[] = [];
  for (const [key, v] of Object.entries(s)) {
    if (v === undefined) continue;
    if (key.startsWith('x-')) extensions.push({ name: key, value: yamlAny(v) });
    else if (key in PLAIN_FIELDS) {
      // A custom schema's values were type-checked on write; anything else is left out rather than fail the document.
      const ok = key === 'required' ? Array.isArray(v) && v.every((x) => typeof x === 'string') : typeof v === (typeof PLAIN_EXAMPLE[key]);
      if (ok) out[PLAIN_FIELDS[key]!] = v;
    }
    else if (key === '$ref' && typeof v === 'string') out['_ref'] = v;
    else if (key === 'type' && typeof v === 'string') out['type'] = { value: [v] };
    else if (key === 'default') out['default'] = yamlAny(v);
    else if (key === 'example') out['example'] = yamlAny(v);
    else if (key === 'enum' && Array.isArray(v)) out['enum'] = v.map(yamlAny);
    else if (key === 'items' && isSchema(v)) out['items'] = { schema: [gnosticSchema(v)] };
    else if (key === 'allOf' && Array.isArray(v)) out['all_of'] = v.filter(isSchema).map(gnosticSchema);
    else if (key === 'properties' && isSchema(v)) {
      out['properties'] = { additional_properties: Object.entries(v).filter(([, p]) => isSchema(p)).map(([name, p]) => ({ name, value: gnosticSchema(p as Record<string, unknown>) })) };
    } else if (key === 'additionalProperties' && (typeof v === 'boolean' || isSchema(v))) {
      out['additional_properties'] = typeof v === 'boolean' ? { boolean: v } : { schema: gnosticSchema(v) };
    }
  }
  if (extensions.length) out['vendor_extension'] = extensions;
  return out;
}

export interface OpenApiV2 {
  contentType: string;
  body: string | Uint8Array;
}

let documentType: Type | undefined;

/** Whether `accept` asks for gnostic's protobuf form. */
export function wantsProtobufV2(accept: string): boolean {
  return OPENAPI_V2_PROTOBUF.some((t) => accept.includes(t));
}

/** The PUT and PATCH of one object path, in Swagger 2.0's JSON. */
function jsonPathItem(p: PatchablePath): Record<string, unknown> {
  const operation = (action: string) => ({
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': p.gvk,
    parameters: VERIFIABLE_QUERY_PARAMS.map((name) => ({ name, in: 'query', type: 'string', uniqueItems: true })),
    responses: { '200': { description: 'OK' } },
  });
  return { patch: operation('patch'), put: operation('put') };
}

/** The same as gnostic's PathItem message. */
function gnosticPathItem(p: PatchablePath): Record<string, unknown> {
  const operation = (action: string) => ({
    parameters: VERIFIABLE_QUERY_PARAMS.map((name) => ({ parameter: { non_body_parameter: { query_parameter_sub_schema: { name, in: 'query', type: 'string', unique_items: true } } } })),
    responses: { response_code: [{ name: '200', value: { response: { description: 'OK' } } }] },
    vendor_extension: [
      { name: 'x-kubernetes-action', value: yamlAny(action) },
      { name: 'x-kubernetes-group-version-kind', value: yamlAny(p.gvk) },
    ],
  });
  return { patch: operation('patch'), put: operation('put') };
}

/** The document in the form `accept` asks for: protobuf when it names one of gnostic's types, else JSON. */
export function openApiV2Document(version: string, accept: string, definitions: () => Record<string, unknown>, paths: () => PatchablePath[]): OpenApiV2 {
  const doc = { swagger: '2.0', info: { title: 'Kubernetes', version } };
  if (!wantsProtobufV2(accept)) {
    const jsonPaths = Object.fromEntries(paths().map((p) => [p.path, jsonPathItem(p)]));
    return { contentType: 'application/json', body: `${JSON.stringify({ ...doc, paths: jsonPaths, definitions: definitions() })}\n` };
  }
  documentType ??= protobuf.parse(OPENAPI_V2_PROTO, { keepCase: true }).root.lookupType('openapi.v2.Document');
  const named = Object.entries(definitions()).map(([name, schema]) => ({ name, value: gnosticSchema(schema as Record<string, unknown>) }));
  const pathItems = paths().map((p) => ({ name: p.path, value: gnosticPathItem(p) }));
  const message = documentType.fromObject({ ...doc, paths: { path: pathItems }, definitions: { additional_properties: named } });
  return { contentType: OPENAPI_V2_PROTOBUF_ANSWER, body: documentType.encode(message).finish() };
}
