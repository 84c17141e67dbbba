import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { type DirectoryLock, lockDirectory } from "../../platform/dir-lock.js";
import type { Click } from "./click-writer.js";

/*
 * Clicks that do not fit in memory while the database is away, on disk until it returns.
 *
 * Segments `<ms>-<seq>.jsonl` in the spill directory, one click per line (JSON), appended with
 * a plain write (in the OS page cache at once, so a crash of the process loses none) and
 * fsynced at most every flush interval (a power loss can lose the last interval's lines).
 * Replay reads a sealed segment batch by batch and deletes it once every line is written.
 * Writing a click is idempotent per click id (clicks, rollups and click postbacks skip a click
 * already stored), so a segment replayed again after a crash between its last write and its
 * deletion stores every click exactly once.
 *
 * The directory is locked to one process (`<dir>.lock`): a second process on the same DATA_DIR
 * (several nodes on one PostgreSQL) does not spill and refuses clicks beyond its memory bound.
 */

const READ_CHUNK = 1024 * 1024;

export interface SpillBatch {
  clicks: Click[];
  /** Offset after the last line read; pass it back to read on. */
  next: number;
  /** True when the segment is read to its end. */
  done: boolean;
  /** Lines that were not a click (a line torn by a power loss): skipped. */
  skipped: number;
}

function isClickRecord(value: unknown): value is Omit<Click, "at"> & { at: string } {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === "string" && typeof v.tenantId === "string" && typeof v.at === "string";
}

export class ClickSpill {
  #lock: DirectoryLock | null = null;
  #fd: number | null = null;
  #active: string | null = null;
  #dirty = false;
  #seq = 0;
  /** Bytes of every segment on disk, sealed or active. */
  bytes = 0;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  get available(): boolean {
    return this.#lock !== null;
  }

  /** Takes the directory; false (and a log line) when it cannot, and clicks are then refused. */
  open(): boolean {
    if (this.#lock) return true;
    try {
      mkdirSync(this.dir, { recursive: true });
      this.#lock = lockDirectory(this.dir);
    } catch (error) {
      this.log.warn(
        { err: error, dir: this.dir },
        "click spill directory unavailable: clicks beyond the buffer are refused",
      );
      return false;
    }
    this.bytes = this.segments().reduce((sum, file) => sum + statSync(file).size, 0);
    return true;
  }

  /** Every segment, oldest first (the active one last). */
  segments(): string[] {
    if (!this.#lock) return [];
    return readdirSync(this.dir)
      .filter((name) => name.endsWith(".jsonl"))
      .sort((a, b) => {
        const [am = 0, as = 0] = a.replace(".jsonl", "").split("-").map(Number);
        const [bm = 0, bs = 0] = b.replace(".jsonl", "").split("-").map(Number);
        return am - bm || as - bs;
      })
      .map((name) => join(this.dir, name));
  }

  /** Appends a click; false when the spill is full or unavailable (the caller refuses it). */
  append(click: Click): boolean {
    if (!this.#lock) return false;
    const line = `${JSON.stringify(click)}\n`;
    const size = Buffer.byteLength(line);
    if (this.bytes + size > this.maxBytes) return false;
    try {
      if (this.#fd === null) {
        this.#seq += 1;
        this.#active = join(this.dir, `${Date.now()}-${this.#seq}.jsonl`);
        this.#fd = openSync(this.#active, "a", 0o600);
      }
      writeSync(this.#fd, line);
    } catch (error) {
      this.log.error({ err: error, dir: this.dir }, "spilling a click to disk failed");
      return false;
    }
    this.bytes += size;
    this.#dirty = true;
    return true;
  }

  /** Flushes appended lines to the disk (called every flush interval and before replay). */
  sync(): void {
    if (this.#fd === null || !this.#dirty) return;
    this.#dirty = false;
    try {
      fsyncSync(this.#fd);
    } catch (error) {
      this.log.error({ err: error }, "fsync of the click spill failed");
    }
  }

  /** The oldest segment to replay, sealing the active one first (new clicks go to a new one). */
  nextSegment(): string | null {
    const [oldest] = this.segments();
    if (oldest === undefined) return null;
    if (oldest === this.#active) this.seal();
    return oldest;
  }

  private seal(): void {
    if (this.#fd === null) return;
    this.sync();
    closeSync(this.#fd);
    this.#fd = null;
    this.#active = null;
  }

  /** Reads up to `max` clicks from `offset`. The last line of a sealed segment may be torn. */
  async read(file: string, offset: number, max: number): Promise<SpillBatch> {
    const handle = await open(file, "r");
    try {
      const clicks: Click[] = [];
      let skipped = 0;
      let position = offset;
      let size = READ_CHUNK;
      for (;;) {
        const buffer = Buffer.alloc(size);
        const { bytesRead } = await handle.read(buffer, 0, size, position);
        if (bytesRead === 0) return { clicks, next: position, done: true, skipped };
        let start = 0;
        let end = buffer.indexOf(10, start);
        while (end !== -1 && end < bytesRead) {
          const click = this.parse(buffer.toString("utf8", start, end));
          if (click) clicks.push(click);
          else skipped += 1;
          start = end + 1;
          if (clicks.length >= max) return { clicks, next: position + start, done: false, skipped };
          end = buffer.indexOf(10, start);
        }
        if (start === 0) {
          // A line without its newline at the end of the file: torn (the write never finished).
          if (bytesRead < size) return { clicks, next: position + bytesRead, done: true, skipped: skipped + 1 };
          // A line longer than the chunk: read a bigger one.
          size *= 2;
        }
        position += start;
      }
    } finally {
      await handle.close();
    }
  }

  private parse(line: string): Click | null {
    try {
      const value: unknown = JSON.parse(line);
      if (!isClickRecord(value)) return null;
      return { ...value, at: new Date(value.at) };
    } catch {
      return null;
    }
  }

  /** Deletes a fully replayed segment. */
  remove(file: string): void {
    let size = 0;
    try {
      size = statSync(file).size;
      unlinkSync(file);
    } catch (error) {
      this.log.error({ err: error, file }, "removing a replayed click spill segment failed");
      return;
    }
    this.bytes = Math.max(0, this.bytes - size);
  }

  /** Seals the active segment and releases the directory (graceful stop). */
  close(): void {
    this.seal();
    this.#lock?.release();
    this.#lock = null;
  }
}
