export interface CircuitBreakerOptions {
  /** Unexpected errors within `windowMs` that open the breaker. @defaultValue 20 */
  threshold: number;
  /** @defaultValue 10000 */
  windowMs: number;
  /** How long an open breaker pauses the work before trying again. @defaultValue 30000 */
  cooldownMs: number;
}

/**
 * A burst of unexpected errors (a dependency down, a bug meeting a new kind of input) opens the breaker:
 * work pauses for a cool-down instead of spinning through retries, then resumes; one more failure right
 * after reopens it.
 */
export class CircuitBreaker {
  private failures: number[] = [];
  private openUntil = 0;

  constructor(private readonly options: CircuitBreakerOptions) {}

  get isOpen(): boolean {
    return Date.now() < this.openUntil;
  }

  /** Records an unexpected failure; answers true when this one opened the breaker. */
  failure(): boolean {
    const now = Date.now();
    this.failures = this.failures.filter((t) => t > now - this.options.windowMs);
    this.failures.push(now);
    if (this.isOpen || this.failures.length < this.options.threshold) return false;
    this.openUntil = now + this.options.cooldownMs;
    this.failures = [];
    return true;
  }

  /** Resolves when the breaker is closed (at once if it is). */
  async whenClosed(sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))): Promise<void> {
    while (this.isOpen) await sleep(Math.max(1, this.openUntil - Date.now()));
  }
}
