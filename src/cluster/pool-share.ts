/**
 * Each worker's share of the connection limits, so that the workers'
 * pools together stay within `WARRANT_PG_POOL_MAX` and
 * `WARRANT_PG_BACKGROUND_POOL_MAX` (env.ts refuses more workers than
 * connections, so every share has at least one).
 */
export interface PoolLimits {
  max: number;
  backgroundMax: number;
}

export function poolShare<T extends PoolLimits>(pool: T, workers: number): T {
  if (workers <= 1) return pool;
  return {
    ...pool,
    max: Math.max(1, Math.floor(pool.max / workers)),
    backgroundMax: Math.floor(pool.backgroundMax / workers),
  };
}

/** Restart delay after a worker's `failures`-th death in a row: 0.5 s doubling, at most 30 s. */
export function restartDelayMs(failures: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, failures - 1));
}
