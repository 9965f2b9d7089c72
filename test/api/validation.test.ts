import { test } from 'node:test';
import assert from 'node:assert/strict';
import { invalid } from '../../src/api/errors.js';
import type { StatusCause } from '../../src/api/types.js';
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isDNS1035Label,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '../../src/api/validation.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

function lines(causes: StatusCause[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

test('name format messages are upstream strings', () => {
  assert.deepEqual(isDNS1123Subdomain('Bad_Name'), [SUBDOMAIN_MSG]);
  assert.deepEqual(isDNS1123Subdomain('ok.example.com'), []);
  assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  assert.deepEqual(isDNS1123Label('Bad'), [LABEL_MSG]);
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
  assert.deepEqual(isDNS1035Label('1abc'), [DNS1035_MSG]);
  assert.deepEqual(isQualifiedName('example.com/name'), []);
  assert.deepEqual(isQualifiedName('/name'), ['prefix part must be non-empty']);
  assert.deepEqual(isQualifiedName('a/b/c'), [
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  ]);
  assert.deepEqual(isQualifiedName('Example.com/x'), [`prefix part ${SUBDOMAIN_MSG}`]);
  assert.deepEqual(isValidLabelValue(''), []);
  assert.deepEqual(isValidLabelValue('a'.repeat(64)), ['must be no more than 63 characters']);
});

test('generateName prefixes may end in a dash', () => {
  assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
  assert.deepEqual(nameIsDNSSubdomain('web-', false), [SUBDOMAIN_MSG]);
});

test('object meta on create', () => {
  const causes = validateObjectMeta({ name: 'Bad_Name', labels: { 'bad key': 'v', ok: '-bad' }, finalizers: ['custom'] }, true, nameIsDNSSubdomain);
  assert.deepEqual(lines(causes), [
    `metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`,
    'metadata.namespace: Required value',
    `metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    `metadata.labels: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
  ]);
  assert.deepEqual(lines(validateObjectMeta({}, false, nameIsDNSSubdomain)), ['metadata.name: Required value: name or generateName is required']);
  assert.deepEqual(lines(validateObjectMeta({ name: 'n', namespace: 'x' }, false, nameIsDNSSubdomain)), ['metadata.namespace: Forbidden: not allowed on this type']);
  const big = 'x'.repeat(256 * 1024);
  assert.deepEqual(lines(validateObjectMeta({ name: 'n', namespace: 'd', annotations: { a: big } }, true, nameIsDNSSubdomain)), [
    'metadata.annotations: Too long: may not be more than 262144 bytes',
  ]);
  assert.deepEqual(lines(validateObjectMeta({ name: 'n', namespace: 'd', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '' }] }, true, nameIsDNSSubdomain)), [
    'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
  ]);
});

test('the 422 message of a bad deployment name matches what kubectl shows', () => {
  const causes = validateObjectMeta({ name: 'Bad_Name', namespace: 'default' }, true, nameIsDNSSubdomain);
  const err = invalid('Deployment', 'apps', 'Bad_Name', causes);
  assert.equal(err.status.message, `Deployment.apps "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`);
});

test('object meta on update', () => {
  const old = { name: 'a', namespace: 'd', uid: 'u1', creationTimestamp: '2026-01-01T00:00:00Z', generation: 3 };
  assert.deepEqual(lines(validateObjectMetaUpdate({ ...old }, old)), []);
  assert.deepEqual(lines(validateObjectMetaUpdate({ ...old, uid: 'u2', generation: 2, creationTimestamp: '2026-01-02T00:00:00Z' }, old)), [
    'metadata.generation: Invalid value: 2: must not be decremented',
    'metadata.uid: Invalid value: "u2": field is immutable',
    'metadata.creationTimestamp: Invalid value: 2026-01-02 00:00:00 +0000 UTC: field is immutable',
  ]);
  const deleting = { ...old, deletionTimestamp: '2026-01-03T00:00:00Z', finalizers: ['a.io/x'] };
  assert.deepEqual(lines(validateObjectMetaUpdate({ ...deleting, finalizers: ['a.io/x', 'a.io/y'] }, deleting)), [
    'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/y"}',
  ]);
});
