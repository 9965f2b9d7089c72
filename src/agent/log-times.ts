// Per-line times for logs a container writes itself. The process runtime gives each container's
// stdout and stderr a file descriptor of its log file (no pipe through the agent, so a container
// outlives an agent crash or upgrade without SIGPIPE), so no one stands between a line and the
// disk to stamp it as containerd's shim does in the CRI format. Instead the agent watches each log
// grow (inotify, throttled) and keeps beside it, in `<log>.times`, how far the file had grown by
// when: "<bytes> <epoch ms>" per line. A line's time is that of the first mark at or past its
// end. While the agent runs that is within THROTTLE_MS of the write; bytes written while no agent
// ran take the time it came back. That is what `kubectl logs --since` and `--timestamps` need
// (kubetail passes --since on every call), without a process per container.
import { appendFileSync, closeSync, existsSync, fstatSync, openSync, readSync, statSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import type { Clock } from '../util/clock.js';
import { nanoTime } from '../util/time.js';

/** Growth closer together than this shares one mark: a chatty container costs at most 10 marks a second. */
const THROTTLE_MS = 100;
/** inotify can miss events (a file system without it, a full queue): look anyway this often. */
const POLL_MS = 2_000;

export function timesPathOf(logPath: string): string {
  return `${logPath}.times`;
}

/** Marks how a running container's log grows; stop() when the container has exited. */
export class LogGrowthRecorder {
  private marked = 0;
  private lastMarkAt = -Infinity;
  private pending?: NodeJS.Timeout;
  private readonly watcher?: FSWatcher;
  private readonly poll: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly logPath: string,
    private readonly clock: Clock,
  ) {
    const file = timesPathOf(logPath);
    // Resumed after an agent restart: go on from the last mark.
    if (existsSync(file)) this.marked = readLogMarks(logPath).bytes.at(-1) ?? 0;
    else writeFileSync(file, '');
    this.check();
    try {
      this.watcher = watch(logPath, { persistent: false }, () => this.changed());
      this.watcher.on('error', () => {});
    } catch {
      // No inotify here: the poll alone marks growth, less precisely.
    }
    this.poll = setInterval(() => this.check(), POLL_MS);
    this.poll.unref();
  }

  private changed(): void {
    if (this.stopped || this.pending) return;
    const wait = this.lastMarkAt + THROTTLE_MS - this.clock.now();
    if (wait <= 0) return this.check();
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.check();
    }, wait);
    this.pending.unref();
  }

  private check(): void {
    if (this.stopped) return;
    let size: number;
    try {
      size = statSync(this.logPath).size;
    } catch {
      return; // not there yet, or removed with its pod
    }
    if (size === this.marked) return;
    const now = this.clock.now();
    const file = timesPathOf(this.logPath);
    try {
      // Smaller: rotated (copied aside and emptied); the marks start again with the file.
      if (size < this.marked) writeFileSync(file, size > 0 ? `${size} ${now}\n` : '');
      else appendFileSync(file, `${size} ${now}\n`);
    } catch {
      return; // the pod's directory is being removed
    }
    this.marked = size;
    this.lastMarkAt = now;
  }

  /** A last look (the container's final lines), then no more. */
  stop(): void {
    this.check();
    this.stopped = true;
    this.watcher?.close();
    clearInterval(this.poll);
    if (this.pending) clearTimeout(this.pending);
  }
}

/** The marks of a log: ascending byte counts and the time each was reached. */
export interface LogMarks {
  bytes: number[];
  times: number[];
}

/**
 * A log's marks, read once and then, on each refresh(), only from where the last read ended: a
 * followed log looks again for every chunk past its marks, and the marks of a container that has
 * written for days are many.
 */
export class LogMarksReader {
  readonly marks: LogMarks = { bytes: [], times: [] };
  /** Bytes of the marks file read so far, whole lines only. */
  private read = 0;

  constructor(private readonly logPath: string) {
    this.refresh();
  }

  refresh(): LogMarks {
    let fd: number;
    try {
      fd = openSync(timesPathOf(this.logPath), 'r');
    } catch {
      return this.marks;
    }
    try {
      const size = fstatSync(fd).size;
      // Smaller than what was read: written anew for a rotated log, whose marks begin again.
      if (size < this.read) {
        this.read = 0;
        this.marks.bytes.length = this.marks.times.length = 0;
      }
      if (size === this.read) return this.marks;
      const buf = Buffer.alloc(size - this.read);
      const text = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, this.read));
      // A line still being written is read whole next time.
      const whole = text.lastIndexOf('\n') + 1;
      addMarks(this.marks, text.slice(0, whole));
      this.read += whole;
    } finally {
      closeSync(fd);
    }
    return this.marks;
  }
}

function addMarks(marks: LogMarks, text: string): void {
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp < 0) continue;
    const b = Number(line.slice(0, sp));
    const t = Number(line.slice(sp + 1));
    if (!Number.isFinite(b) || !Number.isFinite(t)) continue;
    // Only growth counts: a mark below the one before began a rotated file's marks again.
    if (marks.bytes.length > 0 && b <= marks.bytes[marks.bytes.length - 1]!) {
      if (b < marks.bytes[marks.bytes.length - 1]!) marks.bytes.length = marks.times.length = 0;
      else continue;
    }
    marks.bytes.push(b);
    marks.times.push(t);
  }
}

export function readLogMarks(logPath: string): LogMarks {
  return new LogMarksReader(logPath).marks;
}

/** The time of the line that ends at byte `end`: the first mark at or past it; `fallback` past the last. */
export function timeAt(marks: LogMarks, end: number, fallback: number): number {
  let lo = 0;
  let hi = marks.bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (marks.bytes[mid]! < end) lo = mid + 1;
    else hi = mid;
  }
  return lo < marks.times.length ? marks.times[lo]! : fallback;
}

export interface TimedLogOptions {
  /** Byte offset in the file of the first chunk pushed. */
  offset: number;
  timestamps?: boolean;
  sinceMs?: number;
  /** The time of lines no mark covers yet (written in the last moment): now. */
  now(): number;
}

/** Turns a raw log with marks, fed in any chunks from `offset` on, into what `kubectl logs` prints. */
export class TimedLogDecoder {
  private carry: Buffer = Buffer.alloc(0);
  private pos: number;
  private readonly marks: LogMarksReader;
  /** Marks are read again at most once a chunk: lines past them are the newest, and few. */
  private reread = false;

  constructor(
    logPath: string,
    private readonly o: TimedLogOptions,
  ) {
    this.pos = o.offset;
    this.marks = new LogMarksReader(logPath);
  }

  push(chunk: Buffer): Buffer {
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const out: Buffer[] = [];
    this.reread = false;
    let start = 0;
    for (;;) {
      const nl = data.indexOf(0x0a, start);
      if (nl < 0) break;
      this.line(data.subarray(start, nl + 1), out);
      start = nl + 1;
    }
    this.carry = Buffer.from(data.subarray(start));
    return Buffer.concat(out);
  }

  /** What is left when the log ends without a newline (a container that died mid-line). */
  end(): Buffer {
    const out: Buffer[] = [];
    if (this.carry.length > 0) this.line(this.carry, out);
    this.carry = Buffer.alloc(0);
    return Buffer.concat(out);
  }

  private line(line: Buffer, out: Buffer[]): void {
    this.pos += line.length;
    const marks = this.marks.marks;
    if (!this.reread && (marks.bytes.length === 0 || this.pos > marks.bytes[marks.bytes.length - 1]!)) {
      // Written after the marks were read (a followed log): look again before falling back to now.
      this.marks.refresh();
      this.reread = true;
    }
    const t = timeAt(marks, this.pos, this.o.now());
    if (this.o.sinceMs !== undefined && t < this.o.sinceMs) return;
    if (this.o.timestamps) out.push(Buffer.from(`${nanoTime(t)} `, 'latin1'));
    out.push(line);
  }
}
