/** The one source of time, so tests and jobs can run at any instant. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved; for tests and manual job runs. */
export class ManualClock implements Clock {
  #at: number;

  constructor(at: Date | string = new Date()) {
    this.#at = new Date(at).getTime();
  }

  now(): Date {
    return new Date(this.#at);
  }

  set(at: Date | string): void {
    this.#at = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.#at += ms;
  }
}
