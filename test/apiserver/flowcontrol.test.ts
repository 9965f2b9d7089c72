// API Priority and Fairness: classification by the bootstrap FlowSchemas, fair queuing with
// shuffle sharding, Retry-After, the bootstrap objects' reconciliation, and the seats each level
// is given. All on a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../../src/util/clock.js';
import type { FlowSchema, PriorityLevelConfiguration } from '../../src/api/kinds/flowcontrol.js';
import { flowSchemaResource, priorityLevelConfigurationResource } from '../../src/api/kinds/flowcontrol.js';
import { deepClone } from '../../src/api/kinds/json.js';
import type { RequestInfo } from '../../src/apiserver/http/request-info.js';
import { flowDistinguisher, flowSchemaMatches, orderFlowSchemas } from '../../src/apiserver/flowcontrol/classifier.js';
import { AUTO_UPDATE_ANNOTATION, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS, reconcileApfObject } from '../../src/apiserver/flowcontrol/bootstrap-config.js';
import { PriorityAndFairness, RetryAfter } from '../../src/apiserver/flowcontrol/priority-and-fairness.js';
import { QueueSet, dealHand, flowHash, type Release, type Rejection } from '../../src/apiserver/flowcontrol/queue-set.js';
import { danglingConditions } from '../../src/apiserver/flowcontrol/flow-schema-status.js';
import { isStatusError } from '../../src/api/errors.js';

const ALL_SCHEMAS = orderFlowSchemas([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]);
const ALL_LEVELS = [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS];

function schemaFor(user: { name: string; groups: string[] }, info: RequestInfo): string {
  return ALL_SCHEMAS.find((fs) => flowSchemaMatches(fs, user, info))?.metadata.name ?? 'none';
}

const node = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const admin = { name: 'skiff-admin', groups: ['system:masters', 'system:authenticated'] };
const alice = { name: 'alice', groups: ['system:authenticated'] };
const robot = { name: 'system:serviceaccount:team:robot', groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'] };
const kubeSystemSa = { name: 'system:serviceaccount:kube-system:job-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] };
const anonymous = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

const leaseUpdate: RequestInfo = { kind: 'resource', verb: 'update', group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-node-lease', name: 'n1' };
const nodeStatus: RequestInfo = { kind: 'resource', verb: 'patch', group: '', version: 'v1', resource: 'nodes', subresource: 'status', name: 'n1' };
const podStatus: RequestInfo = { kind: 'resource', verb: 'patch', group: '', version: 'v1', resource: 'pods', subresource: 'status', namespace: 'default', name: 'p' };
const podList: RequestInfo = { kind: 'resource', verb: 'list', group: '', version: 'v1', resource: 'pods', namespace: 'team' };

test('the bootstrap schemas send each kind of caller where upstream sends it', () => {
  assert.equal(schemaFor(node, leaseUpdate), 'system-node-high');
  assert.equal(schemaFor(node, nodeStatus), 'system-node-high');
  assert.equal(schemaFor(node, podStatus), 'system-nodes');
  assert.equal(schemaFor(admin, podList), 'exempt');
  assert.equal(schemaFor(alice, podList), 'global-default');
  assert.equal(schemaFor(robot, podList), 'service-accounts');
  assert.equal(schemaFor(kubeSystemSa, podList), 'kube-system-service-accounts');
  assert.equal(schemaFor(kubeSystemSa, { ...leaseUpdate, namespace: 'kube-system', name: 'job-controller' }), 'system-leader-election');
  assert.equal(schemaFor(anonymous, { kind: 'nonresource', verb: 'get', path: '/readyz' }), 'probes');
  assert.equal(schemaFor(alice, { kind: 'nonresource', verb: 'get', path: '/version' }), 'global-default');
  assert.equal(schemaFor({ name: 'x', groups: [] }, podList), 'none');
});

test('flows are told apart by user or by namespace, as the schema says', () => {
  const byUser = ALL_SCHEMAS.find((fs) => fs.metadata.name === 'global-default')!;
  const byNamespace = ALL_SCHEMAS.find((fs) => fs.metadata.name === 'kube-system-service-accounts')!;
  const exempt = ALL_SCHEMAS.find((fs) => fs.metadata.name === 'exempt')!;
  assert.equal(flowDistinguisher(byUser, alice, podList), 'alice');
  assert.equal(flowDistinguisher(byNamespace, kubeSystemSa, podList), 'team');
  assert.equal(flowDistinguisher(exempt, admin, podList), '');
});

test('resource rules: subresources, cluster scope and non-resource prefixes', () => {
  const fs: FlowSchema = {
    metadata: { name: 't' },
    spec: {
      priorityLevelConfiguration: { name: 'x' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'alice' } }],
          resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'], namespaces: ['dev'] }],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz/*'] }],
        },
      ],
    },
  };
  const log: RequestInfo = { kind: 'resource', verb: 'get', group: '', version: 'v1', resource: 'pods', subresource: 'log', namespace: 'dev', name: 'p' };
  assert.equal(flowSchemaMatches(fs, alice, log), true);
  assert.equal(flowSchemaMatches(fs, alice, { ...log, subresource: undefined }), false, 'pods is not pods/log');
  assert.equal(flowSchemaMatches(fs, alice, { ...log, namespace: 'prod' }), false);
  assert.equal(flowSchemaMatches(fs, robot, log), false);
  assert.equal(flowSchemaMatches(fs, alice, { kind: 'nonresource', verb: 'get', path: '/healthz/etcd' }), true);
  assert.equal(flowSchemaMatches(fs, alice, { kind: 'nonresource', verb: 'get', path: '/healthzz' }), false);
});

test('a hand is that many distinct queues of the deck, the same for the same flow', () => {
  for (const key of ['a', 'b', 'global-default\0alice', 'x'.repeat(300)]) {
    const hand = dealHand(flowHash(key), 128, 6);
    assert.equal(hand.length, 6);
    assert.equal(new Set(hand).size, 6);
    assert.ok(hand.every((c) => c >= 0 && c < 128));
    assert.deepEqual(dealHand(flowHash(key), 128, 6), hand);
  }
  assert.deepEqual(dealHand(5n, 3, 3).sort(), [0, 1, 2]);
});

/** Two flow keys whose hands (of 1 in `queues`) differ. */
function twoFlowsApart(queues: number): [string, string] {
  const first = dealHand(flowHash('flow-0'), queues, 1)[0];
  for (let i = 1; ; i++) if (dealHand(flowHash(`flow-${i}`), queues, 1)[0] !== first) return ['flow-0', `flow-${i}`];
}

test('a freed seat goes to the flow served least: one heavy flow does not starve a light one', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ concurrencyLimit: 2, queuing: { queues: 8, handSize: 1, queueLengthLimit: 50 } }, clock, 15_000);
  const [heavy, light] = twoFlowsApart(8);
  const running: Release[] = [];
  for (let i = 0; i < 2; i++) running.push(qs.enter(heavy, 1) as Release);
  const order: string[] = [];
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 5; i++) {
    waits.push(
      (qs.enter(heavy, 1) as Promise<Release | Rejection>).then((r) => {
        order.push('heavy');
        if (typeof r === 'function') running.push(r);
      }),
    );
  }
  waits.push(
    (qs.enter(light, 1) as Promise<Release | Rejection>).then((r) => {
      order.push('light');
      if (typeof r === 'function') running.push(r);
    }),
  );
  assert.equal(qs.waiting, 6);
  await clock.advance(100);
  running.shift()!();
  await Promise.resolve();
  await Promise.resolve();
  assert.deepEqual(order, ['light'], 'the light flow came after five heavy requests and still went first');
  // Each release lets one more in; their releases come back through the promises above.
  for (let i = 0; i < 20 && order.length < 6; i++) {
    running.shift()?.();
    await clock.advance(0);
  }
  await Promise.all(waits);
  while (running.length) running.shift()!();
  assert.equal(qs.executingSeats, 0);
});

test('queues refuse when full, waiting ends in a time-out or when the client goes, and Reject levels never queue', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ concurrencyLimit: 1, queuing: { queues: 1, handSize: 1, queueLengthLimit: 2 } }, clock, 1_000);
  const first = qs.enter('f', 1) as Release;
  assert.equal(typeof first, 'function');
  const timesOut = qs.enter('f', 1) as Promise<Release | Rejection>;
  const gone = new AbortController();
  const cancelled = qs.enter('f', 1, gone.signal) as Promise<Release | Rejection>;
  assert.equal(qs.enter('f', 1), 'queue-full');
  gone.abort();
  assert.equal(await cancelled, 'cancelled');
  await clock.advance(1_001);
  assert.equal(await timesOut, 'time-out');
  assert.equal(qs.waiting, 0);
  first();
  assert.equal(qs.executingSeats, 0);

  const reject = new QueueSet({ concurrencyLimit: 1 }, clock, 1_000);
  const only = reject.enter('f', 1) as Release;
  assert.equal(reject.enter('g', 1), 'concurrency-limit');
  only();
  assert.equal(typeof reject.enter('g', 1), 'function');
});

test('a wide request waits for all its seats; an idle level runs one wider than its limit', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ concurrencyLimit: 4, queuing: { queues: 1, handSize: 1, queueLengthLimit: 10 } }, clock, 10_000);
  const big = qs.enter('a', 10) as Release;
  assert.equal(typeof big, 'function', 'runs alone, capped at the limit');
  assert.equal(qs.executingSeats, 4);
  const next = qs.enter('a', 1) as Promise<Release | Rejection>;
  big();
  assert.equal(typeof (await next), 'function');
});

test('Retry-After starts at 1 s, doubles while refusals go on, stops at 32 and comes down in quiet', () => {
  const r = new RetryAfter();
  const seen: number[] = [];
  for (let s = 0; s < 80; s++) seen.push(r.drop(s * 1000));
  assert.equal(seen[0], 1);
  assert.ok(seen.includes(2) && seen.includes(4) && seen.includes(8));
  assert.equal(seen[79], 32);
  assert.ok(seen.every((v, i) => i === 0 || v >= seen[i - 1]!), 'never shrinks while refusals go on');
  assert.ok(r.drop(200_000) < 32, 'a quiet spell brings it down');
  assert.equal(r.drop(2_000_000), 1);
});

function fakeSource(schemas: FlowSchema[], levels: PriorityLevelConfiguration[]) {
  let version = 1;
  const state = { schemas, levels };
  return {
    state,
    bump: () => version++,
    source: { flowSchemas: () => state.schemas, priorityLevels: () => state.levels, version: () => String(version) },
  };
}

async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const m = registry.getSingleMetric(name);
  const values = (await m!.get()).values;
  return values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))?.value;
}

test('levels share the server\'s seats by nominalConcurrencyShares, and a full level answers 429 with Retry-After', async () => {
  const clock = new FakeClock();
  const registry = new Registry();
  const { source } = fakeSource([...ALL_SCHEMAS], [...ALL_LEVELS]);
  const pf = new PriorityAndFairness({ clock, serverConcurrencyLimit: 600, source, registry });
  const c = pf.classify(alice, podList);
  assert.equal(c.flowSchema.metadata.name, 'global-default');
  assert.equal(c.priorityLevel.metadata.name, 'global-default');
  // 600 seats over shares 30+40+10+40+100+20+5 (+0 exempt) = 245.
  assert.equal(await metric(registry, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'node-high' }), Math.ceil((600 * 40) / 245));
  assert.equal(await metric(registry, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'catch-all' }), Math.ceil((600 * 5) / 245));
  assert.equal(await metric(registry, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'exempt' }), 0);

  // catch-all rejects (no queues) once its seats are taken.
  const nobody = { name: 'nobody', groups: ['system:authenticated'] };
  const onlyCatchAll = fakeSource(MANDATORY_FLOW_SCHEMAS.filter((f) => f.metadata.name !== 'exempt'), [...MANDATORY_PRIORITY_LEVELS]);
  const small = new PriorityAndFairness({ clock, serverConcurrencyLimit: 2, source: onlyCatchAll.source, registry: new Registry() });
  const cc = small.classify(nobody, podList);
  assert.equal(cc.priorityLevel.metadata.name, 'catch-all');
  const held = [await small.admit(cc, 1), await small.admit(cc, 1)];
  await assert.rejects(small.admit(cc, 1), (e: unknown) => isStatusError(e, 'TooManyRequests') && e.status.details?.retryAfterSeconds === 1 && e.status.code === 429);
  held.forEach((r) => r());
  (await small.admit(cc, 1))();
});

test('exempt requests are never limited; a changed level keeps its queue and takes new limits', async () => {
  const clock = new FakeClock();
  const registry = new Registry();
  const fake = fakeSource([...ALL_SCHEMAS], deepClone([...ALL_LEVELS]));
  const pf = new PriorityAndFairness({ clock, serverConcurrencyLimit: 6, source: fake.source, registry });
  const ca = pf.classify(admin, podList);
  const many = await Promise.all(Array.from({ length: 100 }, () => pf.admit(ca, 1)));
  many.forEach((r) => r());
  // global-default has ceil(6*20/245) = 1 seat: the second request waits until the first is done.
  const c = pf.classify(alice, podList);
  const first = await pf.admit(c, 1);
  let secondRan = false;
  const second = pf.admit(c, 1).then((r) => {
    secondRan = true;
    return r;
  });
  await Promise.resolve();
  assert.equal(secondRan, false);
  assert.equal(await metric(registry, 'apiserver_flowcontrol_current_inqueue_requests', { flow_schema: 'global-default', priority_level: 'global-default' }), 1);
  // More shares for global-default: the waiting request runs at once.
  const gd = fake.state.levels.find((l) => l.metadata.name === 'global-default')!;
  gd.spec.limited!.nominalConcurrencyShares = 1000;
  fake.bump();
  pf.classify(alice, podList);
  (await second)();
  assert.equal(secondRan, true);
  first();
});

test('a schema whose level is missing takes nothing, and its Dangling condition says so', () => {
  const clock = new FakeClock();
  const orphan: FlowSchema = { metadata: { name: 'orphan' }, spec: { priorityLevelConfiguration: { name: 'gone' }, matchingPrecedence: 5, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }] }] } };
  const { source } = fakeSource([...ALL_SCHEMAS, orphan], [...ALL_LEVELS]);
  const pf = new PriorityAndFairness({ clock, serverConcurrencyLimit: 600, source, registry: new Registry() });
  assert.equal(pf.classify(alice, podList).flowSchema.metadata.name, 'global-default');
  const names = new Set(ALL_LEVELS.map((l) => l.metadata.name!));
  const conditions = danglingConditions(orphan, names, clock.now())!;
  assert.equal(conditions[0]!.status, 'True');
  assert.match(conditions[0]!.message!, /"gone" but there is no such object/);
  const fixed = danglingConditions({ ...orphan, spec: { ...orphan.spec, priorityLevelConfiguration: { name: 'system' } } }, names, clock.now())!;
  assert.equal(fixed[0]!.status, 'False');
  assert.equal(danglingConditions({ ...orphan, spec: { ...orphan.spec, priorityLevelConfiguration: { name: 'system' } }, status: { conditions: fixed } }, names, clock.now()), undefined, 'nothing to write twice');
});

test('bootstrap objects: mandatory ones are put back, suggested ones only while they ask for it', () => {
  const catchAll = MANDATORY_PRIORITY_LEVELS.find((l) => l.metadata.name === 'catch-all')!;
  const edited = deepClone(catchAll);
  edited.spec.limited!.nominalConcurrencyShares = 500;
  edited.metadata.annotations = { [AUTO_UPDATE_ANNOTATION]: 'false' };
  const fixed = reconcileApfObject(catchAll, edited, true)!;
  assert.equal(fixed.spec.limited!.nominalConcurrencyShares, 5);
  assert.equal(fixed.metadata.annotations![AUTO_UPDATE_ANNOTATION], 'true');

  const exempt = MANDATORY_PRIORITY_LEVELS.find((l) => l.metadata.name === 'exempt')!;
  const tuned = deepClone(exempt);
  tuned.spec.exempt = { nominalConcurrencyShares: 10, lendablePercent: 20 };
  assert.equal(reconcileApfObject(exempt, tuned, true), undefined, "the exempt level's tunables are the administrator's");

  const system = SUGGESTED_PRIORITY_LEVELS.find((l) => l.metadata.name === 'system')!;
  const optedOut = deepClone(system);
  optedOut.spec.limited!.nominalConcurrencyShares = 99;
  optedOut.metadata.annotations = { [AUTO_UPDATE_ANNOTATION]: 'false' };
  assert.equal(reconcileApfObject(system, optedOut, false), undefined);
  optedOut.metadata.annotations = { [AUTO_UPDATE_ANNOTATION]: 'true' };
  assert.equal(reconcileApfObject(system, optedOut, false)!.spec.limited!.nominalConcurrencyShares, 30);
  // No annotation: an object edited since it was made (generation > 1) is left alone and marked so.
  const unmarked = deepClone(optedOut);
  unmarked.metadata.annotations = {};
  unmarked.metadata.generation = 3;
  const marked = reconcileApfObject(system, unmarked, false)!;
  assert.equal(marked.metadata.annotations![AUTO_UPDATE_ANNOTATION], 'false');
  assert.equal(marked.spec.limited!.nominalConcurrencyShares, 99);
});

test('the kinds: defaults and validation as upstream', () => {
  const pl: PriorityLevelConfiguration = { metadata: { name: 'p' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 0, handSize: 0, queueLengthLimit: 0 } } } } };
  priorityLevelConfigurationResource.defaults(pl);
  assert.deepEqual(pl.spec.limited, { nominalConcurrencyShares: 30, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } } });
  assert.deepEqual(priorityLevelConfigurationResource.validate(pl, undefined), []);
  const bad = deepClone(pl);
  bad.spec.limited!.limitResponse.queuing = { queues: 4, handSize: 8, queueLengthLimit: 50 };
  bad.spec.limited!.lendablePercent = 101;
  const causes = priorityLevelConfigurationResource.validate(bad, undefined).map((c) => c.field);
  assert.deepEqual(causes.sort(), ['spec.limited.lendablePercent', 'spec.limited.limitResponse.queuing.handSize']);
  assert.equal(priorityLevelConfigurationResource.validate({ metadata: { name: 'e' }, spec: { type: 'Nope' as 'Exempt' } }, undefined)[0]!.reason, 'FieldValueNotSupported');

  const fs: FlowSchema = { metadata: { name: 'f' }, spec: { priorityLevelConfiguration: { name: 'system' }, rules: [{ subjects: [], resourceRules: [{ verbs: [], apiGroups: ['*'], resources: ['*'] }] }] } };
  flowSchemaResource.defaults(fs);
  assert.equal(fs.spec.matchingPrecedence, 1000);
  const fields = flowSchemaResource.validate(fs, undefined).map((c) => c.field).sort();
  assert.deepEqual(fields, ['spec.rules[0].resourceRules[0].namespaces', 'spec.rules[0].resourceRules[0].verbs', 'spec.rules[0].subjects']);
  fs.spec.matchingPrecedence = 10001;
  assert.ok(flowSchemaResource.validate(fs, undefined).some((c) => c.field === 'spec.matchingPrecedence'));
});
