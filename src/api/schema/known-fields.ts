// The JSON fields each kind accepts, read off its messages: the trees field validation walks to
// report unknown fields anywhere in an object (fieldValidation=Strict/Warn) or to drop them
// (Ignore), as upstream's decoding into Go structs does.
import protobuf from 'protobufjs';
import type { Type } from 'protobufjs';
import { OPAQUE_MESSAGES, isKindMessage, messageFor, protobufSchema } from './root.js';
import { META_V1_PACKAGE } from './messages.js';

/**
 * A node of a known-fields tree:
 *   'leaf'                  a scalar, or a value whose inside is not checked (quantities, IntOrString,
 *                           RawExtension, free-form JSON, Time)
 *   { fields: {...} }       an object with exactly these fields
 *   { map: node }           an object with arbitrary string keys, each value a node (labels: { map: 'leaf' })
 *   { list: node }          an array whose items are nodes
 */
export type FieldTree = 'leaf' | { readonly fields: Readonly<Record<string, FieldTree>> } | { readonly map: FieldTree } | { readonly list: FieldTree };

const trees = new Map<Type, FieldTree>();

function messageTree(type: Type): FieldTree {
  if (OPAQUE_MESSAGES.has(type.fullName)) return 'leaf';
  const cached = trees.get(type);
  if (cached) return cached;
  const fields: Record<string, FieldTree> = {};
  const tree = { fields };
  // Before the fields: a message that holds itself (a schema of schemas) refers to this same node.
  trees.set(type, tree);
  // A kind's object carries its TypeMeta wherever it is, embedded ones included (volumeClaimTemplates).
  if (isKindMessage(type)) Object.assign(fields, { apiVersion: 'leaf', kind: 'leaf' });
  for (const field of type.fieldsArray) {
    const resolved = field.resolvedType;
    let sub: FieldTree = resolved instanceof protobuf.Type ? messageTree(resolved) : 'leaf';
    if (field.map) sub = { map: sub };
    else if (field.repeated) sub = { list: sub };
    // An embedded struct (json:",inline") adds its fields to the parent's.
    if (field.options?.['(inline)'] === true && typeof sub === 'object' && 'fields' in sub) Object.assign(fields, sub.fields);
    else fields[field.name] = sub;
  }
  return tree;
}

/** The fields a `kind` of `apiVersion` accepts, or undefined when the schema does not describe it. */
export function knownFieldsFor(apiVersion: string, kind: string): FieldTree | undefined {
  const type = messageFor(apiVersion, kind);
  return type ? messageTree(type) : undefined;
}

/** ObjectMeta's fields: every object's metadata, custom resources' included. */
export function objectMetaFieldTree(): FieldTree {
  return messageTree(protobufSchema().lookupType(`${META_V1_PACKAGE}.ObjectMeta`));
}
