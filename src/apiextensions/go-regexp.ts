// CRD `pattern`s are Go (RE2) regular expressions. Most are valid JavaScript as written; this
// bridges the common differences so that a pattern upstream accepts is not refused here.

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const cache = new Map<string, RegExp | Error>();

/** The pattern as a RegExp, or the reason it does not compile. */
export function compileGoRegExp(pattern: string): RegExp | Error {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const result = compile(pattern);
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, result);
  return result;
}

function compile(pattern: string): RegExp | Error {
  let source = pattern;
  let flags = '';
  const leading = /^\(\?([imsU]+)\)/.exec(source);
  if (leading) {
    // U (ungreedy) has no JavaScript equivalent; i, m and s carry over.
    flags = [...new Set(leading[1]!.replace('U', ''))].join('');
    source = source.slice(leading[0].length);
  }
  source = source
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$')
    .replace(/\[:(\^?)([a-z]+):\]/g, (m, neg: string, name: string) => {
      const cls = POSIX_CLASSES[name];
      return cls === undefined ? m : neg ? `^${cls}` : cls;
    })
    .replace(/\\p([A-Z])/g, '\\p{$1}')
    .replace(/\\P([A-Z])/g, '\\P{$1}');
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      // Go accepts escaped punctuation that JavaScript's unicode mode refuses.
      return new RegExp(source, flags);
    } catch (e) {
      return e as Error;
    }
  }
}
