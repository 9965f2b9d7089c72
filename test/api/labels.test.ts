import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../src/api/errors.js';
import {
  labelSelectorFromObject,
  matchLabelSelectorObject,
  parseLabelSelector,
  selectorFromSet,
  selectorObjectToString,
  validateLabelSelectorObject,
} from '../../src/api/labels.js';

function parseError(text: string): string {
  try {
    parseLabelSelector(text);
  } catch (e) {
    assert.ok(isStatusError(e, 'BadRequest'), 'a 400 StatusError');
    return e.status.message ?? '';
  }
  assert.fail(`expected ${JSON.stringify(text)} to be rejected`);
}

test('label selector operators match like upstream', () => {
  const labels = { app: 'web', tier: 'front', version: '3' };
  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app in (db)', false],
    ['app notin (db, cache)', true],
    ['missing notin (a)', true],
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['version>2', true],
    ['version<2', false],
    ['app=', false],
    ['in in (in)', false],
  ];
  for (const [text, want] of cases) assert.equal(parseLabelSelector(text).matches(labels), want, text);
  assert.equal(parseLabelSelector('empty=').matches({ empty: '' }), true);
  assert.equal(parseLabelSelector('x in (,a)').matches({ x: '' }), true);
});

test('label selector canonical string and exact-match lookup', () => {
  const s = parseLabelSelector('tier in (b, a),app=web, !gone');
  // Requirements sort by key, so "!gone" sits between app and tier.
  assert.equal(s.toString(), 'app=web,!gone,tier in (a,b)');
  assert.equal(s.requiresExactMatch('app'), 'web');
  assert.equal(s.requiresExactMatch('tier'), undefined);
  assert.equal(parseLabelSelector('').isEmpty(), true);
  assert.equal(selectorFromSet({ b: '2', a: '1' }).toString(), 'a=1,b=2');
});

test('label selector syntax errors use upstream wording', () => {
  assert.equal(parseError('app=web,'), "found '', expected: identifier after ','");
  assert.equal(parseError('app web'), "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt");
  assert.equal(parseError('app in web'), "unable to parse requirement: found 'web' expected: '('");
  assert.equal(parseError('app in (a'), "unable to parse requirement: found '', expected: ',' or ')'");
  assert.equal(parseError('=web'), "found '=', expected: !, identifier, or 'end of string'");
  assert.equal(parseError('!a=b'), "found '=', expected: ',' or 'end of string'");
  assert.match(parseError('bad key!=x'), /^unable to parse requirement: /);
  assert.equal(
    parseError('Bad_Key_=x'),
    `unable to parse requirement: <nil>: Invalid value: "Bad_Key_": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
  );
  assert.equal(parseError('app=bad value'), "found 'value', expected: ',' or 'end of string'");
  assert.equal(
    parseError('app=-x'),
    `unable to parse requirement: values[0][app]: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
  );
  assert.equal(parseError('v>x'), `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`);
});

test('structured selectors: absent selects nothing, empty selects everything', () => {
  assert.equal(matchLabelSelectorObject(undefined, { a: '1' }), false);
  assert.equal(matchLabelSelectorObject({}, { a: '1' }), true);
  const sel = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }, { key: 'canary', operator: 'DoesNotExist' }] };
  assert.equal(matchLabelSelectorObject(sel, { app: 'web', tier: 'a' }), true);
  assert.equal(matchLabelSelectorObject(sel, { app: 'web', tier: 'a', canary: 'y' }), false);
  assert.equal(selectorObjectToString(sel), 'app=web,!canary,tier in (a,b)');
  assert.equal(selectorObjectToString({ matchLabels: { app: 'web' } }), 'app=web');
  assert.equal(selectorObjectToString(undefined), '');
  assert.equal(matchLabelSelectorObject({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }, { a: '1' }), false);
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), /"Bogus" is not a valid label selector operator/);
});

test('structured selector validation', () => {
  const causes = validateLabelSelectorObject(
    { matchLabels: { ok: 'yes' }, matchExpressions: [{ key: 'a', operator: 'In', values: [] }, { key: 'b', operator: 'Exists', values: ['x'] }, { key: 'c', operator: 'Nope' }] },
    'spec.selector',
  );
  assert.deepEqual(
    causes.map((c) => `${c.field}: ${c.message}`),
    [
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Nope": not a valid selector operator',
    ],
  );
});
