import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resourceFieldValue } from '../../src/agent/field-ref.js';

describe('resourceFieldRef values', () => {
  const node = { cpu: '2', memory: '4Gi' };
  it('divide the limit or request by the divisor, rounding up, as the kubelet does', () => {
    const res = { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '250m' } };
    assert.equal(resourceFieldValue(res, 'limits.cpu', undefined, node), '1');
    assert.equal(resourceFieldValue(res, 'limits.cpu', '1m', node), '500');
    assert.equal(resourceFieldValue(res, 'limits.memory', undefined, node), '67108864');
    assert.equal(resourceFieldValue(res, 'limits.memory', '1Mi', node), '64');
    assert.equal(resourceFieldValue(res, 'requests.cpu', '1m', node), '250');
  });

  it("read the node's allocatable for an unset limit and 0 for an unset request", () => {
    assert.equal(resourceFieldValue({}, 'limits.cpu', undefined, node), '2');
    assert.equal(resourceFieldValue(undefined, 'limits.memory', '1Gi', node), '4');
    assert.equal(resourceFieldValue({}, 'requests.memory', undefined, node), '0');
    assert.equal(resourceFieldValue({}, 'spec.cpu', undefined, node), undefined);
  });
});
