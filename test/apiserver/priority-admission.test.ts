// Priority admission and PriorityClass validation: a pod's class resolves to its priority and
// preemption policy at creation, with upstream's refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { priorityAdmission, type PriorityClassLookup } from '../../src/apiserver/admission/priority.js';
import type { AdmissionAttributes, Operation } from '../../src/apiserver/admission/plugin.js';
import { priorityClassResource, SYSTEM_PRIORITY_CLASSES, type PriorityClass } from '../../src/api/kinds/priorityclass.js';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';

const pods = resourceTypeFor('', 'v1', 'pods')!;

function pc(name: string, value: number, extra: Partial<PriorityClass> = {}): PriorityClass {
  return { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, preemptionPolicy: 'PreemptLowerPriority', ...extra };
}

function lookup(classes: PriorityClass[]): PriorityClassLookup {
  const all = [...SYSTEM_PRIORITY_CLASSES, ...classes];
  return { list: () => all, find: async (name) => all.find((c) => c.metadata.name === name) };
}

function podAttrs(spec: Record<string, unknown>, operation: Operation = 'CREATE', oldSpec?: Record<string, unknown>): AdmissionAttributes {
  const object: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } };
  const oldObject = oldSpec ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: oldSpec } : undefined;
  return { operation, resource: pods, subresource: '', namespace: 'default', name: 'p', object, oldObject, user: { name: 'u', groups: [] }, dryRun: false };
}

function specOf(a: AdmissionAttributes): Record<string, unknown> {
  return a.object!.spec as Record<string, unknown>;
}

async function forbiddenMessage(run: () => Promise<void> | void): Promise<string> {
  try {
    await run();
  } catch (e) {
    assert.ok(isStatusError(e, 'Forbidden'), String(e));
    return e.message;
  }
  assert.fail('expected a refusal');
}

test('a named class gives its value and preemption policy', async () => {
  const plugin = priorityAdmission(lookup([pc('high', 1000, { preemptionPolicy: 'Never' })]));
  const a = podAttrs({ priorityClassName: 'high' });
  await plugin.mutate!(a);
  assert.equal(specOf(a).priority, 1000);
  assert.equal(specOf(a).preemptionPolicy, 'Never');
  const sys = podAttrs({ priorityClassName: 'system-node-critical' });
  await plugin.mutate!(sys);
  assert.equal(specOf(sys).priority, 2000001000);
});

test('no class: the global default, else 0', async () => {
  const none = podAttrs({});
  await priorityAdmission(lookup([])).mutate!(none);
  assert.equal(specOf(none).priority, 0);
  assert.equal(specOf(none).priorityClassName, undefined);
  const withDefault = podAttrs({});
  await priorityAdmission(lookup([pc('b', 7, { globalDefault: true }), pc('a', 5, { globalDefault: true })])).mutate!(withDefault);
  assert.equal(specOf(withDefault).priority, 5);
  assert.equal(specOf(withDefault).priorityClassName, 'a');
});

test('an unknown class and a conflicting priority are refused with upstream messages', async () => {
  const plugin = priorityAdmission(lookup([pc('high', 1000)]));
  assert.equal(await forbiddenMessage(() => plugin.mutate!(podAttrs({ priorityClassName: 'nope' }))), 'pods "p" is forbidden: no PriorityClass with name nope was found');
  assert.equal(
    await forbiddenMessage(() => plugin.mutate!(podAttrs({ priorityClassName: 'high', priority: 5 }))),
    'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
  );
  const same = podAttrs({ priorityClassName: 'high', priority: 1000 });
  await plugin.mutate!(same);
  assert.equal(specOf(same).priority, 1000);
});

test('an update keeps the priority it was created with', async () => {
  const a = podAttrs({}, 'UPDATE', { priority: 9, preemptionPolicy: 'Never' });
  await priorityAdmission(lookup([])).mutate!(a);
  assert.equal(specOf(a).priority, 9);
  assert.equal(specOf(a).preemptionPolicy, 'Never');
});

test('only one global default class', async () => {
  const plugin = priorityAdmission(lookup([pc('d', 5, { globalDefault: true })]));
  const attrs = (operation: Operation, name: string): AdmissionAttributes => ({
    operation, resource: priorityClassResource, subresource: '', namespace: undefined, name, object: pc(name, 1, { globalDefault: true }), oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false,
  });
  assert.equal(await forbiddenMessage(() => plugin.validate!(attrs('CREATE', 'e'))), 'priorityclasses.scheduling.k8s.io "e" is forbidden: PriorityClass d is already marked as default. Only one default can exist');
  await plugin.validate!(attrs('UPDATE', 'd'));
});

test('PriorityClass validation', () => {
  const msgs = (o: PriorityClass, old?: PriorityClass) => priorityClassResource.validate(o, old).map((c) => `${c.field}: ${c.message}`);
  assert.deepEqual(msgs(pc('big', 1_000_000_001)), ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000']);
  assert.deepEqual(msgs(pc('system-mine', 5)), ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"]);
  assert.deepEqual(msgs(pc('system-node-critical', 5)), ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"]);
  assert.deepEqual(msgs(SYSTEM_PRIORITY_CLASSES[0]!), []);
  assert.deepEqual(msgs(pc('x', 1, { preemptionPolicy: 'Sometimes' })), ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"']);
  const old = pc('x', 1);
  old.metadata.resourceVersion = '1';
  const changed = pc('x', 2);
  changed.metadata.resourceVersion = '1';
  assert.deepEqual(msgs(changed, old), ['value: Forbidden: may not be changed in an update.']);
  const o = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'x' }, value: 1 } as PriorityClass;
  priorityClassResource.defaults(o);
  assert.equal(o.preemptionPolicy, 'PreemptLowerPriority');
  assert.deepEqual(priorityClassResource.table.cells(pc('x', 3), 0).slice(0, 3), ['x', 3, false]);
});
