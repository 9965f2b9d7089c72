import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGoRegExp } from '../../src/apiextensions/go-regexp.js';

function matches(pattern: string, yes: string[], no: string[]): void {
  const re = compileGoRegExp(pattern);
  assert.ok(re instanceof RegExp, `${pattern}: ${re instanceof Error ? re.message : ''}`);
  for (const s of yes) assert.ok(re.test(s), `${pattern} matches ${JSON.stringify(s)}`);
  for (const s of no) assert.ok(!re.test(s), `${pattern} does not match ${JSON.stringify(s)}`);
}

test('inline flags anywhere, for the rest of their group (across |) or for (?flags:re) alone', () => {
  matches('^(?i)(abort|warn)?$', ['ABORT', 'Warn', ''], ['x']);
  // prometheus-operator's months: the flag is set inside the group and holds to its end.
  matches('^((?i)january|february|1[0-2]|[1-9])(?:,((?i)march))?$', ['JANUARY', 'February', '12', 'january,MARCH'], ['13', 'MARCH', 'jan']);
  matches('^(?i:[a-c]+)x$', ['ABcx'], ['ABcX']);
  matches('^a(?i)b(?-i)c$', ['aBc'], ['aBC', 'ABc']);
  matches('(?s:a.b)', ['a\nb'], []);
  matches('(?m)^b$', ['a\nb\nc'], ['ab']);
  matches('^(?U)a+$', ['aaa'], ['']);
});

test('RE2 constructs JavaScript spells otherwise or lacks', () => {
  matches('^[[:alpha:]]+\\z', ['abc'], ['abc\n', 'a1']);
  matches('^[^[:^digit:]]$', ['5'], ['a']);
  matches('^(?P<year>\\d{4})-\\Q.*+\\E$', ['2024-.*+'], ['2024-ab']);
  matches('\\A\\pL\\p{Greek}\\PN$', ['aαx'], ['aα1']);
  matches('^\\x{41}\\x42\\101\\-\\#\\:\\ $', ['ABA-#: '], []);
  matches('^{foo}a{2}$', ['{foo}aa'], []);
  matches('^[]a]+$', [']a]'], ['b']);
});

test('constructs that mean something else in JavaScript mean what they mean in RE2', () => {
  // . matches \r in RE2 (not \n); \s is ASCII and without \v; $ is the end of the text.
  matches('^a.c$', ['a\rc', 'a\u2028c'], ['a\nc']);
  matches('^\\s$', [' ', '\t'], ['\v', '\u00a0']);
  matches('^\\w+$', ['a_1'], ['é']);
  matches('^a$', ['a'], ['a\n']);
});

test('what RE2 refuses is refused, in its words', () => {
  const refused: [string, string][] = [
    ['(?=a)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['(?!a)', 'invalid or unsupported Perl syntax: `(?!`'],
    // Go 1.22 and later (Kubernetes 1.32 is built with 1.23) take `(?<` for a named capture.
    ['(?<=a)b', 'invalid named capture: `(?<=a)b`'],
    ['(?<!a)b', 'invalid named capture: `(?<!a)b`'],
    ['(?<=a)>', 'invalid named capture: `(?<=a)>`'],
    ['(?<', 'invalid or unsupported Perl syntax: `(?<`'],
    ['(?P<', 'invalid or unsupported Perl syntax: `(?P`'],
    ['(?>a)', 'invalid or unsupported Perl syntax: `(?>`'],
    ['a*+', 'invalid nested repetition operator: `*+`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    ['a{2}{3}', 'invalid nested repetition operator: `{2}{3}`'],
    ['(a)\\1', 'invalid escape sequence: `\\1`'],
    ['\\Z', 'invalid escape sequence: `\\Z`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['(a', 'missing closing ): `(a`'],
    ['a)', 'unexpected ): `a)`'],
    ['[a', 'missing closing ]: `[a`'],
    ['*a', 'missing argument to repetition operator: `*`'],
    ['[z-a]', 'invalid character class range: `z-a`'],
    ['(?P<>a)', 'invalid named capture: `(?P<>`'],
  ];
  for (const [pattern, message] of refused) {
    const re = compileGoRegExp(pattern);
    assert.ok(re instanceof Error, `${pattern} is refused`);
    assert.equal(re.message, message, pattern);
  }
});
