/**
 * A background loop that runs `round` again at once while it says more work may be waiting, and
 * otherwise sleeps until `wake()` (a NOTIFY, a freed slot) or the idle poll. A wake-up that
 * comes while a round runs is kept, so work announced mid-round is never left for the poll.
 */
export class WakeableLoop {
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(
    private readonly round: () => Promise<boolean>,
    private readonly idleMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let more = false;
      try {
        more = await this.round();
      } catch (error) {
        this.onError(error);
      }
      if (more || this.woken || !this.running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.idleMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }

  /** Lets the round under way finish; no new one starts. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    this.loop = null;
  }
}
