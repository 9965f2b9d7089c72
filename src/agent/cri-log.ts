// Reading container logs in the CRI format that containerd writes: one record per line,
// "<RFC 3339 nano timestamp> <stdout|stderr> <P|F> <content>", where P marks a partial line (a long
// line split by the runtime, continued by the next record) and F a full one. `kubectl logs` wants
// the content back, with each record's own timestamp when --timestamps is asked, and only records
// from --since-time / --since on: exact per line, as the kubelet serves them.

export interface CriLogOptions {
  /** Prefix each record with its timestamp (kubectl logs --timestamps). */
  timestamps?: boolean;
  /** Drop records before this time (ms since the epoch). */
  sinceMs?: number;
}

export interface CriRecord {
  /** As written: RFC 3339 with nanoseconds. */
  time: string;
  stream: 'stdout' | 'stderr';
  partial: boolean;
  content: Buffer;
}

const NEWLINE = 0x0a;
const SPACE = 0x20;

/** One record (without its newline); undefined when the line is not in the CRI format. */
export function parseCriLine(line: Buffer): CriRecord | undefined {
  const a = line.indexOf(SPACE);
  if (a < 0) return undefined;
  const b = line.indexOf(SPACE, a + 1);
  if (b < 0) return undefined;
  const stream = line.toString('latin1', a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  // The tag field: P or F (newer runtimes may add more, colon-separated); the content may be empty.
  const c = line.indexOf(SPACE, b + 1);
  const tag = line.toString('latin1', b + 1, c < 0 ? line.length : c);
  return { time: line.toString('latin1', 0, a), stream, partial: tag.split(':')[0] === 'P', content: c < 0 ? Buffer.alloc(0) : line.subarray(c + 1) };
}

/** Milliseconds since the epoch of an RFC 3339 time with any number of fraction digits. */
export function criTimeMs(time: string): number {
  return Date.parse(time.replace(/(\.\d{3})\d+/, '$1'));
}

/** Turns CRI log bytes, fed in any chunks, into what `kubectl logs` prints. */
export class CriLogDecoder {
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly o: CriLogOptions = {}) {}

  /** Output for every complete line in what has been fed so far. */
  push(chunk: Buffer): Buffer {
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const out: Buffer[] = [];
    let start = 0;
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl < 0) break;
      const line = data.subarray(start, nl);
      start = nl + 1;
      const r = parseCriLine(line);
      if (!r) {
        // Not CRI (a file written before the runtime changed): passed through as it is.
        out.push(line, Buffer.from('\n'));
        continue;
      }
      if (this.o.sinceMs !== undefined && criTimeMs(r.time) < this.o.sinceMs) continue;
      if (this.o.timestamps) out.push(Buffer.from(`${r.time} `, 'latin1'));
      out.push(r.content);
      if (!r.partial) out.push(Buffer.from('\n'));
    }
    this.carry = Buffer.from(data.subarray(start));
    return Buffer.concat(out);
  }
}
