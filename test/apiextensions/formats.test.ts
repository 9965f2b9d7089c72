import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatValid, isSupportedFormat } from '../../src/apiextensions/formats.js';
import { goFloat, goSharpV } from '../../src/apiextensions/go-format.js';

test('only the formats upstream keeps are validated', () => {
  for (const f of ['date', 'date-time', 'uuid', 'byte', 'ipv4', 'ipv6', 'cidr', 'hostname', 'email', 'uri', 'duration', 'mac', 'password']) assert.ok(isSupportedFormat(f), f);
  for (const f of ['int32', 'int64', 'float', 'double', 'int-or-string', 'quantity', '']) assert.ok(!isSupportedFormat(f), f);
});

test('format checks', () => {
  const ok: [string, string][] = [
    ['date', '2024-02-29'],
    ['date-time', '2024-02-29T23:59:59.123+02:00'],
    ['date-time', '2024-01-01t00:00:00z'],
    ['uuid', '3f2504e04f8911d39a0c0305e82c3301'],
    ['byte', 'aGVsbG8='],
    ['ipv4', '10.0.0.1'],
    ['ipv6', '::1'],
    ['cidr', '10.0.0.0/8'],
    ['hostname', 'example.com'],
    ['email', 'a.b@example.com'],
    ['uri', 'https://example.com/x?y=1'],
    ['duration', '1h30m'],
    ['duration', '3 days'],
    ['mac', '00:1a:2b:3c:4d:5e'],
  ];
  for (const [f, v] of ok) assert.ok(formatValid(f, v), `${f} ${v}`);
  const bad: [string, string][] = [
    ['date', '2023-02-29'],
    ['date', '2024-2-01'],
    ['date-time', '2024-01-01 00:00:00Z'],
    ['date-time', '2024-01-01T24:00:00Z'],
    ['uuid', 'nope'],
    ['byte', 'abc'],
    ['ipv4', '10.0.0.256'],
    ['ipv6', '10.0.0.1'],
    ['cidr', '10.0.0.0/33'],
    ['hostname', '-bad-'],
    ['email', 'nope'],
    ['uri', 'relative/path'],
    ['duration', 'soon'],
    ['mac', '00:1a:2b'],
  ];
  for (const [f, v] of bad) assert.ok(!formatValid(f, v), `${f} ${v}`);
});

test("Go's rendering of values in messages", () => {
  assert.equal(goFloat(0.5), '0.5');
  assert.equal(goFloat(1e6), '1e+06');
  assert.equal(goFloat(123456), '123456');
  assert.equal(goFloat(0.00001), '1e-05');
  assert.equal(goSharpV({ b: 1, a: ['x', null] }), 'map[string]interface {}{"a":[]interface {}{"x", interface {}(nil)}, "b":1}');
});
