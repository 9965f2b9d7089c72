import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareQuantities, integerValue, milliValue, parseQuantity, QUANTITY_FORMAT_ERROR, quantityErrors } from '../../src/api/quantity.js';

test('quantities parse to base units', () => {
  assert.equal(parseQuantity('2'), 2);
  assert.equal(parseQuantity('100m'), 0.1);
  assert.equal(parseQuantity('1Gi'), 1024 ** 3);
  assert.equal(parseQuantity('1e3'), 1000);
  assert.equal(parseQuantity('1.5k'), 1500);
  assert.equal(parseQuantity('512Mi'), 512 * 1024 ** 2);
  assert.equal(parseQuantity('-1'), -1);
  assert.equal(parseQuantity(4), 4);
});

test('milli values round up exactly', () => {
  assert.equal(milliValue('100m'), 100);
  assert.equal(milliValue('0.1'), 100);
  assert.equal(milliValue('1'), 1000);
  assert.equal(milliValue('2.5'), 2500);
  assert.equal(milliValue('1n'), 1);
  assert.equal(milliValue('1Ki'), 1024000);
  assert.equal(integerValue('100m'), 1);
  assert.equal(integerValue('1Gi'), 1073741824);
});

test('comparison is exact across formats', () => {
  assert.equal(compareQuantities('1000m', '1'), 0);
  assert.equal(compareQuantities('1Ki', '1024'), 0);
  assert.equal(compareQuantities('1k', '1Ki'), -1);
  assert.equal(compareQuantities('0.1', '99m'), 1);
});

test('malformed quantities are reported with upstream messages', () => {
  assert.deepEqual(quantityErrors('abc'), [QUANTITY_FORMAT_ERROR]);
  assert.deepEqual(quantityErrors('1Zi'), [QUANTITY_FORMAT_ERROR]);
  assert.deepEqual(quantityErrors('1mi'), ["unable to parse quantity's suffix"]);
  assert.deepEqual(quantityErrors(''), [QUANTITY_FORMAT_ERROR]);
  assert.deepEqual(quantityErrors('1.5Gi'), []);
  assert.throws(() => parseQuantity('x'), { message: QUANTITY_FORMAT_ERROR });
});
