// The audit log (`--audit-log-path`): events are encoded as they happen and written in batches,
// one write per turn of the event loop while the previous write is done, so a request never waits
// for the disk. The file is rotated by size as upstream's (lumberjack) rotates it: the full file
// is renamed NAME-<UTC time>.EXT and the oldest backups beyond --audit-log-maxbackup, or older than
// --audit-log-maxage days, are removed. close() writes everything still buffered.
import { open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Logger } from '../../util/log.js';
import { errorText } from '../../util/error-text.js';
import { eventJson, eventLegacyLine, type AuditEvent } from './event.js';

export type AuditLogFormat = 'json' | 'legacy';
export const AUDIT_LOG_FORMATS: readonly AuditLogFormat[] = ['json', 'legacy'];

export interface AuditLogOptions {
  /** A file, or "-" for standard output. */
  path: string;
  format?: AuditLogFormat;
  /** Days a backup is kept, by the time in its name; 0: no limit (upstream's default). */
  maxAgeDays?: number;
  /** Backups kept; 0: all (upstream's default). */
  maxBackups?: number;
  /** Megabytes a file grows to before it is rotated; 0: lumberjack's default, 100. */
  maxSizeMB?: number;
  log: Logger;
  /** The time backups are named with and aged by (tests). */
  now?: () => number;
}

/** Where finished events go. */
export interface AuditSink {
  write(ev: AuditEvent): void;
  /** Writes what is buffered and releases the file. */
  close(): Promise<void>;
}

/** Text waiting beyond this (a disk that stopped taking writes) is dropped, not held until memory runs out. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_SIZE_MB = 100;

export class AuditLogBackend implements AuditSink {
  private pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();
  private file?: FileHandle;
  private size = 0;
  private dropped = 0;
  private closed = false;
  private readonly encode: (ev: AuditEvent) => string;
  private readonly now: () => number;

  constructor(private readonly opts: AuditLogOptions) {
    this.encode = opts.format === 'legacy' ? eventLegacyLine : eventJson;
    this.now = opts.now ?? Date.now;
  }

  /** Opens the file (creating its directory's file if need be), so a path that cannot be written fails the start. */
  async open(): Promise<void> {
    if (this.toStdout) return;
    await this.openFile();
  }

  private get toStdout(): boolean {
    return this.opts.path === '-';
  }

  write(ev: AuditEvent): void {
    if (this.closed) return;
    // Encoded now: the request goes on changing its event after this stage.
    const line = `${this.encode(ev)}\n`;
    if (this.pendingBytes + line.length > MAX_PENDING_BYTES) {
      if (this.dropped++ === 0) this.opts.log.warn({ path: this.opts.path }, 'audit log is not keeping up: dropping events');
      return;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (!this.scheduled) {
      this.scheduled = true;
      // Everything the requests of this turn produce goes out in one write.
      setImmediate(() => {
        this.writing = this.writing.then(() => this.flush());
      });
    }
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const lines = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    try {
      if (this.toStdout) {
        await new Promise<void>((resolve) => process.stdout.write(lines.join(''), () => resolve()));
        return;
      }
      await this.writeLines(lines);
    } catch (e) {
      this.opts.log.warn({ err: errorText(e), path: this.opts.path }, 'could not write the audit log');
    }
  }

  /** One write for the lines that fit in the file; a line that would take it past the size rotates it first. */
  private async writeLines(lines: readonly string[]): Promise<void> {
    let text = '';
    let bytes = 0;
    for (const line of lines) {
      const n = Buffer.byteLength(line);
      // A file is never empty when rotated: a single event bigger than the limit has a file of its own.
      if (this.size + bytes > 0 && this.size + bytes + n > this.maxBytes) {
        if (text) await this.append(text, bytes);
        text = '';
        bytes = 0;
        await this.rotate();
      }
      text += line;
      bytes += n;
    }
    if (text) await this.append(text, bytes);
  }

  private async append(text: string, bytes: number): Promise<void> {
    if (!this.file) await this.openFile();
    await this.file!.write(text);
    this.size += bytes;
  }

  private get maxBytes(): number {
    return (this.opts.maxSizeMB || DEFAULT_MAX_SIZE_MB) * 1024 * 1024;
  }

  private async openFile(): Promise<void> {
    this.file = await open(this.opts.path, 'a', 0o600);
    this.size = (await this.file.stat()).size;
  }

  /** The full file becomes a backup, a new one is started, and backups beyond the limits go. */
  private async rotate(): Promise<void> {
    await this.file?.close();
    this.file = undefined;
    await rename(this.opts.path, this.backupName());
    await this.openFile();
    await this.removeOldBackups().catch((e: unknown) => this.opts.log.warn({ err: errorText(e) }, 'could not remove old audit log backups'));
  }

  /** NAME-2006-01-02T15-04-05.000.EXT in UTC, as lumberjack names backups; a clash takes the next millisecond. */
  private backupName(): string {
    const { dir, prefix, ext } = this.parts();
    for (let t = this.now(); ; t++) {
      const stamp = new Date(t).toISOString().slice(0, 23).replace(/:/g, '-');
      const name = join(dir, `${prefix}-${stamp}${ext}`);
      if (!existsSync(name)) return name;
    }
  }

  private parts(): { dir: string; prefix: string; ext: string } {
    const ext = extname(this.opts.path);
    return { dir: dirname(this.opts.path), prefix: basename(this.opts.path, ext), ext };
  }

  private async removeOldBackups(): Promise<void> {
    const { maxBackups = 0, maxAgeDays = 0 } = this.opts;
    if (maxBackups <= 0 && maxAgeDays <= 0) return;
    const { dir, prefix, ext } = this.parts();
    const backups: { name: string; time: number }[] = [];
    for (const name of await readdir(dir)) {
      if (!name.startsWith(`${prefix}-`) || !name.endsWith(ext)) continue;
      const stamp = name.slice(prefix.length + 1, name.length - ext.length);
      const m = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
      if (!m) continue;
      backups.push({ name, time: Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5]}Z`) });
    }
    backups.sort((a, b) => b.time - a.time);
    const cutoff = this.now() - maxAgeDays * 24 * 3600 * 1000;
    const remove = backups.filter((b, i) => (maxBackups > 0 && i >= maxBackups) || (maxAgeDays > 0 && b.time < cutoff));
    await Promise.all(remove.map((b) => rm(join(dir, b.name), { force: true })));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writing;
    await this.flush();
    await this.file?.close();
    this.file = undefined;
    if (this.dropped > 0) this.opts.log.warn({ dropped: this.dropped, path: this.opts.path }, 'audit events were dropped');
  }
}
