// String formats a CRD schema can validate (apiextensions-apiserver validation/formats.go over
// kube-openapi strfmt). Any other format, int32/int64/float/double included, is stripped before
// validation and so ignored: checkers exist only for the names upstream keeps.
import { isIP } from 'node:net';
import { isValidCidr } from '../api/cidr.js';

type Checker = (s: string) => boolean;

/** Upstream compares format names with dashes removed ("date-time" is "datetime"). */
export function normalizeFormat(format: string): string {
  return format.replaceAll('-', '');
}

export function isSupportedFormat(format: string | undefined): format is string {
  return typeof format === 'string' && format !== '' && Object.prototype.hasOwnProperty.call(CHECKERS, normalizeFormat(format));
}

export function formatValid(format: string, value: string): boolean {
  const check = CHECKERS[normalizeFormat(format)];
  return check === undefined || check(value);
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const CREDIT_CARD = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const OCTET = '(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])';
const RGBCOLOR = new RegExp(`^rgb\\(\\s*${OCTET}\\s*,\\s*${OCTET}\\s*,\\s*${OCTET}\\s*\\)$`);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const DOT_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*";
const ADDR_SPEC = `(?:${DOT_ATOM}|"(?:[^"\\\\]|\\\\.)*")@(?:${DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])`;
const EMAIL = new RegExp(`^(?:${ADDR_SPEC}|[^<>]*<${ADDR_SPEC}>)$`);

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

// strfmt's check: a valid date, a "t", then a time of day with zone (compared as strings, as upstream does).
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = TIME_OF_DAY.exec(parts[1]!);
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

const GO_DURATION = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const DURATION_UNITS: string[][] = [['ns', 'nano'], ['us', 'µs', 'micro'], ['ms', 'milli'], ['s', 'sec'], ['m', 'min'], ['h', 'hr', 'hour'], ['d', 'day'], ['w', 'wk', 'week']];

// Go's time.ParseDuration, else strfmt's lenient "<n> <unit>" scan anywhere in the string.
function isDuration(s: string): boolean {
  if (s === '0' || s === '+0' || s === '-0' || GO_DURATION.test(s)) return true;
  for (const m of s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    const unit = m[2]!.trim().toLowerCase();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

// url.ParseRequestURI: an absolute URI or an absolute path, without control characters or bad escapes.
function isRequestURI(s: string): boolean {
  if (s === '' || /[\x00-\x1f\x7f]/.test(s) || /%(?![0-9A-Fa-f]{2})/.test(s)) return false;
  if (s === '*' || s.startsWith('/')) return true;
  return /^[A-Za-z][A-Za-z0-9+.-]*:./.test(s);
}

function isIPv4Sloppy(s: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (m) return m.slice(1).every((o) => Number(o) <= 255);
  return isIP(s) === 6 && s.includes('.');
}

// net.ParseMAC: 6, 8 or 20 octets as xx:xx/xx-xx groups, or 3, 4 or 10 xxxx.xxxx groups.
function isMAC(s: string): boolean {
  if (s.length < 14) return false;
  const sep = s[2];
  if (sep === ':' || sep === '-') {
    const groups = s.split(sep);
    return [6, 8, 20].includes(groups.length) && groups.every((g) => /^[0-9A-Fa-f]{2}$/.test(g));
  }
  if (s[4] === '.') {
    const groups = s.split('.');
    return [3, 4, 10].includes(groups.length) && groups.every((g) => /^[0-9A-Fa-f]{4}$/.test(g));
  }
  return false;
}

function isISBN10(str: string): boolean {
  const s = str.replace(/[\s-]+/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(s[i]);
  sum += s[9] === 'X' ? 100 : 10 * Number(s[9]);
  return sum % 11 === 0;
}

function isISBN13(str: string): boolean {
  const s = str.replace(/[\s-]+/g, '');
  if (!/^[0-9]{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(s[i]);
  return Number(s[12]) === (10 - (sum % 10)) % 10;
}

function isCreditCard(str: string): boolean {
  const s = str.replace(/[^0-9]+/g, '');
  if (!CREDIT_CARD.test(s)) return false;
  let sum = 0;
  let double = false;
  for (let i = s.length - 1; i >= 0; i--) {
    let d = Number(s[i]);
    if (double) {
      d *= 2;
      if (d >= 10) d = (d % 10) + 1;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && s.length <= 255 && s.split('.').every((p) => p.length <= 63);
}

const CHECKERS: Record<string, Checker> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: (s) => EMAIL.test(s.trim()),
  hostname: isHostname,
  ipv4: isIPv4Sloppy,
  ipv6: (s) => isIP(s) !== 0 && s.includes(':'),
  cidr: isValidCidr,
  mac: isMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && SSN.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};
