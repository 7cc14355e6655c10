// The fleet-wide fence rate: how many fences may start per minute, whatever their nodes. As
// kube-controller-manager's eviction limiter (reference 003), a token bucket, with a slower
// secondary rate for nodes in a partially disrupted zone or silent together with others. Time is
// the controller's monotonic clock, so a stepped system clock cannot refill a bucket.

/**
 * Which rate a fence start is counted against; "unmetered": none (a node its driver read off: the
 * rate limits power-offs, and that fence powers nothing off).
 */
export type FenceRateClass = "primary" | "secondary" | "unmetered";

/** A token bucket: `perMinute` tokens a minute, at most `burst` saved up; starts full. */
export class TokenBucket {
  readonly perMinute: number;
  readonly burst: number;
  #tokens: number;
  #at: number | undefined;

  constructor(perMinute: number, burst: number) {
    this.perMinute = perMinute;
    this.burst = burst;
    this.#tokens = burst;
  }

  /** Tokens available at `nowMs` (refilled since the last look). */
  available(nowMs: number): number {
    if (this.#at !== undefined && nowMs > this.#at) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((nowMs - this.#at) * this.perMinute) / 60_000);
    }
    this.#at = Math.max(this.#at ?? nowMs, nowMs);
    return this.#tokens;
  }

  /** Takes one token if there is one. */
  take(nowMs: number): boolean {
    if (this.available(nowMs) < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** How long until a token is available (0: now). */
  waitMs(nowMs: number): number {
    const missing = 1 - this.available(nowMs);
    return missing <= 0 ? 0 : Math.ceil((missing * 60_000) / this.perMinute);
  }
}

export interface FenceRateSettings {
  fenceRatePerMinute: number;
  secondaryFenceRatePerMinute: number;
  fenceBurst: number;
}

export type RateTake = { taken: true } | { taken: false; waitMs: number; message: string };

/**
 * Every fence start takes a token of the fleet-wide bucket; one counted at the secondary rate takes
 * a token of the (fleet-wide) secondary bucket too, so the secondary rate never exceeds the primary.
 */
export class FenceRateLimiter {
  readonly #primary: TokenBucket;
  readonly #secondary: TokenBucket;

  constructor(settings: FenceRateSettings) {
    this.#primary = new TokenBucket(settings.fenceRatePerMinute, settings.fenceBurst);
    this.#secondary = new TokenBucket(settings.secondaryFenceRatePerMinute, settings.fenceBurst);
  }

  /** Takes what a fence start of `rate` needs, all or nothing. */
  take(rate: FenceRateClass, nowMs: number): RateTake {
    if (rate === "unmetered") return { taken: true };
    const buckets = rate === "secondary" ? [this.#primary, this.#secondary] : [this.#primary];
    const waitMs = Math.max(...buckets.map((b) => b.waitMs(nowMs)));
    if (waitMs > 0) {
      const limit = rate === "secondary" ? this.#secondary : this.#primary;
      return {
        taken: false,
        waitMs,
        message: `the fleet-wide ${rate} fence rate (${limit.perMinute}/min) is used up; next start in ${Math.ceil(waitMs / 1000)}s`,
      };
    }
    for (const bucket of buckets) bucket.take(nowMs);
    return { taken: true };
  }
}
