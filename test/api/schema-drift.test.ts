// Each kind is described once, by its messages (src/api/schema); the views derived from them (the
// known fields of field validation, the merge schema of patches and apply) must agree on every path.
import { servedKinds } from '../../src/apiextensions/served-kinds.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { knownFieldsOf } from '../../src/api/field-validation.js';
import type { FieldTree } from '../../src/api/schema/known-fields.js';
import { schemaFor, type Schema } from '../../src/api/schema/merge-schema.js';
import { messageFor } from '../../src/api/schema/root.js';
import { apiVersionOf } from '../../src/api/types.js';

/** Paths the merge schema names that the known fields do not have. */
function strays(schema: Schema, tree: FieldTree, path: string, out: string[]): void {
  if (schema.type === 'atomic' || tree === 'leaf') return;
  if (schema.type === 'struct') {
    if (!('fields' in tree)) return void out.push(`${path}: a struct in the merge schema, not in the messages`);
    for (const [name, sub] of Object.entries(schema.fields)) {
      const known = tree.fields[name];
      if (known === undefined) out.push(`${path}.${name}`);
      else strays(sub, known, `${path}.${name}`, out);
    }
    return;
  }
  if (schema.type === 'map') {
    if (!('map' in tree)) return void out.push(`${path}: a map in the merge schema, not in the messages`);
    if (schema.values) strays(schema.values, tree.map, `${path}{}`, out);
    return;
  }
  if (!('list' in tree)) return void out.push(`${path}: a list in the merge schema, not in the messages`);
  if (schema.items) strays(schema.items, tree.list, `${path}[]`, out);
  const item = tree.list;
  for (const key of schema.keys ?? []) {
    if (item === 'leaf' || !('fields' in item) || item.fields[key] === undefined) out.push(`${path}[]: merge key ${key}`);
  }
}

test('every served kind is described by messages, and the merge schema names only fields they have', () => {
  for (const rt of servedKinds) {
    assert.ok(messageFor(apiVersionOf(rt.group, rt.version), rt.kind), `${rt.group}/${rt.kind} has messages`);
    const out: string[] = [];
    strays(schemaFor(rt), knownFieldsOf(rt), rt.kind, out);
    assert.deepEqual(out, [], `${rt.kind}: the merge schema names fields the messages lack`);
  }
});
