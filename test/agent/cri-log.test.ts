import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CriLogDecoder, criTimeMs, parseCriLine } from '../../src/agent/cri-log.js';

const file = [
  '2026-12-06T10:00:00.100000000Z stdout F first line',
  '2026-12-06T10:00:01.200000000Z stderr P a long line, ',
  '2026-12-06T10:00:01.200000001Z stderr F split by the runtime',
  '2026-12-06T10:00:02.300000000Z stdout F ',
  '2026-12-06T10:00:03.400000000Z stdout F last',
  '',
].join('\n');

describe('CRI log decoding', () => {
  it('gives back the content, joining partial records, an empty record as an empty line', () => {
    assert.equal(new CriLogDecoder().push(Buffer.from(file)).toString(), 'first line\na long line, split by the runtime\n\nlast\n');
  });

  it('holds an incomplete line until the rest arrives, whatever the chunks', () => {
    const d = new CriLogDecoder();
    const bytes = Buffer.from(file);
    let out = '';
    for (let i = 0; i < bytes.length; i += 7) out += d.push(bytes.subarray(i, i + 7)).toString();
    assert.equal(out, 'first line\na long line, split by the runtime\n\nlast\n');
    assert.equal(new CriLogDecoder().push(Buffer.from('2026-12-06T10:00:00Z stdout F no newline yet')).length, 0);
  });

  it('prefixes each record with its own timestamp (--timestamps) and drops records before --since', () => {
    const out = new CriLogDecoder({ timestamps: true, sinceMs: Date.parse('2026-12-06T10:00:02.000Z') }).push(Buffer.from(file)).toString();
    assert.equal(out, '2026-12-06T10:00:02.300000000Z \n2026-12-06T10:00:03.400000000Z last\n');
  });

  it('passes lines that are not in the CRI format through as they are', () => {
    assert.equal(new CriLogDecoder().push(Buffer.from('plain text\n')).toString(), 'plain text\n');
    assert.equal(parseCriLine(Buffer.from('2026-12-06T10:00:00Z stdin F x')), undefined);
  });

  it('reads nanosecond times to the millisecond', () => {
    assert.equal(criTimeMs('2026-12-06T10:00:01.234567891Z'), Date.parse('2026-12-06T10:00:01.234Z'));
    assert.equal(criTimeMs('2026-12-06T10:00:01Z'), Date.parse('2026-12-06T10:00:01Z'));
  });
});
