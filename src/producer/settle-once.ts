/**
 * A promise settled by whichever of several concurrent watchers gets there first (the event stream,
 * the Postgres re-check, the timeout, the caller's signal); later attempts are ignored.
 */
export class SettleOnce<T> {
  readonly promise: Promise<T>;
  #settled = false;
  #resolve!: (value: T) => void;
  #reject!: (error: unknown) => void;

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get settled(): boolean {
    return this.#settled;
  }

  resolve(value: T): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(value);
  }

  reject(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(error);
  }
}
