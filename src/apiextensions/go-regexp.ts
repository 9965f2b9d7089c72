// CRD `pattern`s are Go (RE2) regular expressions. JavaScript's syntax differs in ways that both
// refuse patterns upstream accepts (flags in the middle, `\Q…\E`, POSIX classes, escaped
// punctuation, a literal `{`) and accept ones upstream refuses (lookaround, backreferences,
// possessive repetition); and some constructs mean something else (`.` and `\r`, `\s` and `\v`).
// So a pattern is read as RE2 reads it and written out as an equivalent JavaScript RegExp, or
// refused with RE2's message.

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

// RE2's Perl classes are ASCII-only; JavaScript's \s also takes Unicode spaces and \v.
const PERL_CLASSES: Record<string, string> = { d: '0-9', s: '\\t\\n\\f\\r ', w: '0-9A-Za-z_' };

const MAX_REPEAT = 1000;

const cache = new Map<string, RegExp | Error>();

/** The pattern as a RegExp, or the reason RE2 refuses it (in RE2's words). */
export function compileGoRegExp(pattern: string): RegExp | Error {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let result: RegExp | Error;
  try {
    result = new RegExp(translateGoRegExp(pattern), 'u');
  } catch (e) {
    result = e instanceof Error ? e : new Error(String(e));
  }
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, result);
  return result;
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

class Re2Error extends Error {}

const fail = (what: string, text: string): never => {
  throw new Re2Error(`${what}: \`${text}\``);
};

const hex = (cp: number): string => `\\u{${cp.toString(16)}}`;

/** A code point as a JavaScript literal safe anywhere, in and out of classes. */
function literal(cp: number): string {
  const ch = String.fromCodePoint(cp);
  return /[0-9A-Za-z_ ]/.test(ch) ? ch : hex(cp);
}

function caseVariants(cp: number): number[] {
  const ch = String.fromCodePoint(cp);
  const out = new Set([cp]);
  for (const v of [ch.toLowerCase(), ch.toUpperCase()]) if ([...v].length === 1) out.add(v.codePointAt(0)!);
  return [...out];
}

/** Translates an RE2 pattern to JavaScript source for the `u` flag; throws RE2's error. */
export function translateGoRegExp(pattern: string): string {
  const cps = [...pattern].map((c) => c.codePointAt(0)!);
  let pos = 0;
  const text = (from: number, to = cps.length): string => String.fromCodePoint(...cps.slice(from, to));
  const peek = (off = 0): string | undefined => (pos + off < cps.length ? String.fromCodePoint(cps[pos + off]!) : undefined);

  const flagStack: Flags[] = [];
  let flags: Flags = { i: false, m: false, s: false, U: false };
  let out = '';
  // Whether the last thing written can take a repetition operator, and where it starts.
  let lastAtomStart = -1;
  let depth = 0;
  const groupStarts: number[] = [];

  const atom = (s: string): void => {
    lastAtomStart = out.length;
    out += s;
  };

  const escape = (inClass: boolean): { single?: number; cls?: string } => {
    // pos is at the backslash.
    const start = pos;
    pos++;
    const c = peek();
    if (c === undefined) return fail('trailing backslash at end of expression', '');
    pos++;
    switch (c) {
      case 'a': return { single: 7 };
      case 'f': return { single: 12 };
      case 't': return { single: 9 };
      case 'n': return { single: 10 };
      case 'r': return { single: 13 };
      case 'v': return { single: 11 };
      case 'x': {
        if (peek() === '{') {
          const close = cps.indexOf('}'.codePointAt(0)!, pos);
          const digits = close < 0 ? '' : text(pos + 1, close);
          if (close < 0 || !/^[0-9A-Fa-f]+$/.test(digits) || parseInt(digits, 16) > 0x10ffff) fail('invalid escape sequence', text(start, close < 0 ? cps.length : close + 1));
          pos = close + 1;
          return { single: parseInt(digits, 16) };
        }
        const digits = text(pos, pos + 2);
        if (!/^[0-9A-Fa-f]{2}$/.test(digits)) fail('invalid escape sequence', text(start, Math.min(pos + 2, cps.length)));
        pos += 2;
        return { single: parseInt(digits, 16) };
      }
      case 'd': case 's': case 'w': return { cls: `[${PERL_CLASSES[c]}]` };
      case 'D': case 'S': case 'W': return { cls: `[^${PERL_CLASSES[c.toLowerCase()]}]` };
      case 'p': case 'P': {
        let name: string;
        if (peek() === '{') {
          const close = cps.indexOf('}'.codePointAt(0)!, pos);
          if (close < 0) fail('invalid character class range', text(start));
          name = text(pos + 1, close);
          pos = close + 1;
        } else {
          name = peek() ?? '';
          pos++;
        }
        let negate = c === 'P';
        if (name.startsWith('^')) {
          negate = !negate;
          name = name.slice(1);
        }
        // One- and two-letter names are general categories; longer ones are scripts (Greek, Han).
        const prop = name === 'Any' ? 'Any' : /^[A-Z][a-z]?$/.test(name) ? name : `Script=${name}`;
        try {
          new RegExp(`\\p{${prop}}`, 'u');
        } catch {
          fail('invalid character class range', text(start, pos));
        }
        return { cls: `\\${negate ? 'P' : 'p'}{${prop}}` };
      }
      default:
        if (/[0-7]/.test(c)) {
          // RE2 reads \0 and \1–\7 followed by more octal digits as octal; a lone \1 would be a
          // backreference, which it does not have.
          if (c !== '0' && !/[0-7]/.test(peek() ?? '')) fail('invalid escape sequence', text(start, pos));
          let digits = c;
          while (digits.length < 3 && /[0-7]/.test(peek() ?? '')) digits += peek()!, pos++;
          return { single: parseInt(digits, 8) };
        }
        if (/[ -\/:-@\[-`{-~]/.test(c)) return { single: c.codePointAt(0)! };
        if (!inClass && (c === 'b' || c === 'B' || c === 'A' || c === 'z')) return { cls: `\\${c}` };
        return fail('invalid escape sequence', text(start, pos));
    }
  };

  const parseClass = (): string => {
    // pos is at '['.
    const start = pos;
    pos++;
    let negated = false;
    if (peek() === '^') {
      negated = true;
      pos++;
    }
    const items: string[] = [];
    const extra: string[] = [];
    let first = true;
    for (;;) {
      const c = peek();
      if (c === undefined) fail('missing closing ]', text(start));
      if (c === ']' && !first) {
        pos++;
        break;
      }
      first = false;
      if (c === '[' && peek(1) === ':') {
        const close = text(pos).indexOf(':]');
        const m = close < 0 ? null : /^\[:(\^?)([a-z]+):\]$/.exec(text(pos, pos + close + 2));
        if (m) {
          const cls = POSIX_CLASSES[m[2]!];
          if (cls === undefined) fail('invalid character class range', m[0]);
          pos += close + 2;
          if (m[1]) extra.push(`[^${cls}]`);
          else items.push(cls!);
          continue;
        }
      }
      let lo: number;
      if (c === '\\') {
        const e = escape(true);
        if (e.cls !== undefined) {
          items.push(e.cls.startsWith('[^') ? '' : e.cls.startsWith('[') ? e.cls.slice(1, -1) : e.cls);
          if (e.cls.startsWith('[^')) extra.push(e.cls);
          continue;
        }
        lo = e.single!;
      } else {
        lo = cps[pos]!;
        pos++;
      }
      let hi = lo;
      if (peek() === '-' && peek(1) !== ']' && peek(1) !== undefined) {
        const rangeStart = pos - 1;
        pos++;
        if (peek() === '\\') {
          const e = escape(true);
          if (e.single === undefined) fail('invalid character class range', text(rangeStart, pos));
          hi = e.single!;
        } else {
          hi = cps[pos]!;
          pos++;
        }
        if (hi < lo) fail('invalid character class range', text(rangeStart, pos));
      }
      items.push(lo === hi ? literal(lo) : `${literal(lo)}-${literal(hi)}`);
      if (flags.i) items.push(...foldedRanges(lo, hi));
    }
    const body = items.join('');
    if (extra.length === 0) return `[${negated ? '^' : ''}${body}]`;
    // A negated class inside a class ([^[:^digit:]], [a\D]) has no JavaScript spelling but as a union.
    const union = `(?:${[...(body ? [`[${body}]`] : []), ...extra].join('|')})`;
    return negated ? `(?:(?!${union})[^])` : union;
  };

  while (pos < cps.length) {
    const c = peek()!;
    if (c === '\\' && peek(1) === 'Q') {
      pos += 2;
      // Each quoted character is its own atom, so a repetition after \E takes only the last one.
      while (pos < cps.length && !(peek() === '\\' && peek(1) === 'E')) {
        atom(flags.i ? foldedLiteral(cps[pos]!) : literal(cps[pos]!));
        pos++;
      }
      pos += 2;
      continue;
    }
    switch (c) {
      case '(': {
        const start = pos;
        if (peek(1) === '?') {
          // Go (1.22 on) reads any `(?<` with something after it as a named capture, so lookbehind
          // is refused as a bad name; `(?P<` likewise needs something after it.
          const left = cps.length - pos;
          const withP = left > 4 && peek(2) === 'P' && peek(3) === '<';
          if (withP || (left > 3 && peek(2) === '<')) {
            pos += withP ? 4 : 3;
            const close = cps.indexOf('>'.codePointAt(0)!, pos);
            const name = close < 0 ? '' : text(pos, close);
            if (close < 0 || !/^[A-Za-z0-9_]+$/.test(name)) fail('invalid named capture', text(start, close < 0 ? cps.length : close + 1));
            pos = close + 1;
            flagStack.push({ ...flags });
            groupStarts.push(out.length);
            out += `(?<${name}>`;
            depth++;
            lastAtomStart = -1;
            continue;
          }
          // Flags: (?flags) sets them to the end of the enclosing group, (?flags:re) for re alone.
          const m = /^\(\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(text(pos, Math.min(cps.length, pos + 12)));
          if (!m || (m[2] !== undefined && m[2] === '') || (m[1] === '' && m[2] === undefined && m[3] === ')')) {
            fail('invalid or unsupported Perl syntax', text(pos, Math.min(cps.length, pos + 3)));
          }
          const next = { ...flags };
          for (const f of m![1]!) next[f as keyof Flags] = true;
          for (const f of m![2] ?? '') next[f as keyof Flags] = false;
          pos += m![0].length;
          if (m![3] === ')') {
            flags = next;
          } else {
            flagStack.push(flags);
            flags = next;
            groupStarts.push(out.length);
            out += '(?:';
            depth++;
            lastAtomStart = -1;
          }
          continue;
        }
        pos++;
        flagStack.push({ ...flags });
        groupStarts.push(out.length);
        out += '(';
        depth++;
        lastAtomStart = -1;
        continue;
      }
      case ')': {
        if (depth === 0) fail('unexpected )', pattern);
        pos++;
        depth--;
        flags = flagStack.pop()!;
        out += ')';
        lastAtomStart = groupStarts.pop()!;
        continue;
      }
      case '|':
        pos++;
        out += '|';
        lastAtomStart = -1;
        continue;
      case '^':
        pos++;
        atom(flags.m ? '(?<![^\\n])' : '^');
        lastAtomStart = -1;
        continue;
      case '$':
        pos++;
        atom(flags.m ? '(?![^\\n])' : '$');
        lastAtomStart = -1;
        continue;
      case '.':
        pos++;
        atom(flags.s ? '[^]' : '[^\\n]');
        continue;
      case '[':
        atom(parseClass());
        continue;
      case '*':
      case '+':
      case '?':
      case '{': {
        const start = pos;
        let op: string = c;
        if (c === '{') {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(text(pos, Math.min(cps.length, pos + 24)));
          if (!m) {
            // Not a repetition: RE2 takes the brace literally.
            pos++;
            atom('\\{');
            continue;
          }
          const min = Number(m[1]);
          const max = m[3] ? Number(m[3]) : m[2] ? -1 : min;
          if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && max < min)) fail('invalid repeat count', m[0]);
          op = m[0];
          pos += m[0].length;
        } else {
          pos++;
        }
        if (lastAtomStart < 0) fail('missing argument to repetition operator', text(start, pos));
        let lazy = false;
        if (peek() === '?') {
          lazy = true;
          pos++;
        }
        const after = peek();
        const braces = after === '{' ? /^\{\d+(,\d*)?\}/.exec(text(pos, Math.min(cps.length, pos + 24))) : null;
        if (after === '*' || after === '+' || after === '?' || braces) fail('invalid nested repetition operator', text(start, pos + (braces ? braces[0].length : 1)));
        if (flags.U) lazy = !lazy;
        out += op + (lazy ? '?' : '');
        lastAtomStart = -1;
        continue;
      }
      case '\\': {
        const e = escape(false);
        if (e.cls === '\\A') {
          atom('^');
          lastAtomStart = -1;
        } else if (e.cls === '\\z') {
          atom('$');
          lastAtomStart = -1;
        } else if (e.cls === '\\b' || e.cls === '\\B') {
          atom(e.cls);
          lastAtomStart = -1;
        } else if (e.cls !== undefined) atom(e.cls);
        else atom(flags.i ? foldedLiteral(e.single!) : literal(e.single!));
        continue;
      }
      default: {
        const cp = cps[pos]!;
        pos++;
        atom(flags.i ? foldedLiteral(cp) : c === '}' || c === ']' ? `\\${c}` : literal(cp));
      }
    }
  }
  if (depth > 0) fail('missing closing )', pattern);
  return out;
}

function foldedLiteral(cp: number): string {
  const v = caseVariants(cp);
  return v.length === 1 ? literal(cp) : `[${v.map(literal).join('')}]`;
}

/** The other case of the ASCII letters in lo..hi, as class ranges. */
function foldedRanges(lo: number, hi: number): string[] {
  const out: string[] = [];
  const shift = (a: number, b: number, by: number): void => {
    const l = Math.max(lo, a);
    const h = Math.min(hi, b);
    if (l <= h) out.push(`${literal(l + by)}-${literal(h + by)}`);
  };
  shift(0x61, 0x7a, -32);
  shift(0x41, 0x5a, 32);
  if (lo === hi && lo > 0x7f) for (const v of caseVariants(lo)) if (v !== lo) out.push(literal(v));
  return out;
}
