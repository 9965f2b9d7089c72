// Unknown fields anywhere in an object, as upstream's decoder finds them: built-in kinds decode into
// Go structs, so a field the struct lacks is reported (fieldValidation=Strict: an error; Warn: a
// warning) and never stored. Paths are spelled as upstream spells them: `spec.containers[0].comand`.
import type { ResourceType } from './resource.js';
import { knownFieldsFor, type FieldTree } from './schema/known-fields.js';
import { apiVersionOf } from './types.js';

export interface UnknownFieldsOptions {
  /** Delete the unknown fields from the object as they are found. */
  prune?: boolean;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The paths of fields `tree` does not know, in document order. */
export function unknownFields(value: unknown, tree: FieldTree, opts: UnknownFieldsOptions = {}): string[] {
  const out: string[] = [];
  walk(value, tree, '', out, opts.prune === true);
  return out;
}

function walk(value: unknown, tree: FieldTree, path: string, out: string[], prune: boolean): void {
  if (tree === 'leaf' || value === null || value === undefined) return;
  if ('fields' in tree) {
    // A value of the wrong type is for validation to report; here only objects have fields.
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value)) {
      const sub = tree.fields[key];
      const p = path ? `${path}.${key}` : key;
      if (sub === undefined || !Object.prototype.hasOwnProperty.call(tree.fields, key)) {
        out.push(p);
        if (prune) delete value[key];
        continue;
      }
      walk(value[key], sub, p, out, prune);
    }
    return;
  }
  if ('map' in tree) {
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value)) walk(value[key], tree.map, path ? `${path}.${key}` : key, out, prune);
    return;
  }
  if (!Array.isArray(value)) return;
  value.forEach((item, i) => walk(item, tree.list, `${path}[${i}]`, out, prune));
}

/** The kind's tree, from its messages (every served kind has them: test/api/field-validation.test.ts checks). */
export function knownFieldsOf(rt: ResourceType): FieldTree {
  const tree = knownFieldsFor(apiVersionOf(rt.group, rt.version), rt.kind);
  if (!tree) throw new Error(`no messages describe ${rt.group}/${rt.kind}: add them to src/api/schema/messages.ts`);
  return tree;
}
