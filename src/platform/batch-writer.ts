/** Outcomes one write takes at most: one transaction of a few hundred rows. */
const WRITE_BATCH = 500;

/**
 * Writes a delivery loop's outcomes as they come back: while one batch is being written the next
 * gathers, so a busy worker writes a few large batches instead of one transaction per attempt.
 * What waits is bounded by the loop's slots (each attempt adds one outcome, then frees its slot).
 */
export class BatchWriter<T> {
  private queue: T[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly write: (batch: T[]) => Promise<unknown>,
    private readonly onError: (error: unknown, count: number) => void,
  ) {}

  add(item: T): void {
    this.queue.push(item);
    this.writing ??= this.writeAll();
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, WRITE_BATCH);
        try {
          await this.write(batch);
        } catch (error) {
          this.onError(error, batch.length);
        }
      }
    } finally {
      // In the same turn as the last emptiness check: an item added later starts a new run.
      this.writing = null;
    }
  }

  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }
}
