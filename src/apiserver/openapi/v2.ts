// /openapi/v2: the Swagger 2.0 document. kubectl fetches it (as protobuf) to validate an object on
// the client when the OpenAPI v3 documents cannot vouch that the server validates fields of its
// kind. That is the case for `kind: List`, which `kubectl get -o yaml` writes and users apply back;
// without this document `kubectl apply|create -f list.yaml` stops with "the server could not find
// the requested resource".
//
// As JSON the document carries every definition (the v3 documents' schemas, with #/definitions/
// references). As protobuf it lists none: kubectl then finds no model for a kind and leaves
// validation to the server, which validates every item of a List (fieldValidation) as it does
// single objects. Everything else kubectl does with schemas (explain, apply's patches) reads v3.
import protobuf from 'protobufjs';
import type { Type } from 'protobufjs';

/**
 * The protobuf media types of gnostic's openapi_v2.Document that clients ask for (kubectl 1.27-1.33
 * asks for the first). The answer always carries the second: Go's mime parser, which client-go runs
 * on the Content-Type, refuses the '@'.
 */
const OPENAPI_V2_PROTOBUF = ['application/com.github.proto-openapi.spec.v2@v1.0+protobuf', 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf'];
const OPENAPI_V2_PROTOBUF_ANSWER = OPENAPI_V2_PROTOBUF[1]!;

// The fields of gnostic's OpenAPIv2.proto (package openapi.v2) this document uses; field numbers
// are the contract. Paths and Definitions are sent empty.
const OPENAPI_V2_PROTO = `
syntax = "proto3";
package openapi.v2;
message Info { string title = 1; string version = 2; }
message Paths {}
message Definitions {}
message Document {
  string swagger = 1;
  Info info = 2;
  Paths paths = 8;
  Definitions definitions = 9;
}
`;

export interface OpenApiV2 {
  contentType: string;
  body: string | Uint8Array;
}

let documentType: Type | undefined;

/** The document in the form `accept` asks for: protobuf when it names one of gnostic's types, else JSON. */
export function openApiV2Document(version: string, accept: string, definitions: () => Record<string, unknown>): OpenApiV2 {
  const doc = { swagger: '2.0', info: { title: 'Kubernetes', version }, paths: {}, definitions: {} };
  if (!OPENAPI_V2_PROTOBUF.some((t) => accept.includes(t))) return { contentType: 'application/json', body: `${JSON.stringify({ ...doc, definitions: definitions() })}\n` };
  documentType ??= protobuf.parse(OPENAPI_V2_PROTO, { keepCase: true }).root.lookupType('openapi.v2.Document');
  return { contentType: OPENAPI_V2_PROTOBUF_ANSWER, body: documentType.encode(documentType.fromObject(doc)).finish() };
}
