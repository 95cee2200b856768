/**
 * Seeded, reproducible choices for the simulated model: every draw is a hash
 * of the seed, the profile and what is being decided (the request and the
 * turn), so the same seed and the same conversation give the same reply in
 * any order and any process, and no state is carried between requests.
 */
import { createHash } from "node:crypto";

export interface Draws {
  /** A number in [0, 1) for the decision named `label`. */
  unit(label: string): number;
  /** True with probability `probability` for the decision named `label`. */
  chance(label: string, probability: number): boolean;
  /** One element of a non-empty list for the decision named `label`. */
  pick<T>(label: string, items: readonly T[]): T;
  /** A short hex tag for ids, stable for `label`. */
  tag(label: string, length?: number): string;
}

function digest(parts: readonly (string | number)[]): string {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(String(part)).update("\u0000");
  return hash.digest("hex");
}

/** Draws for one decision context (`parts`: seed, profile, request, turn …). */
export function drawsFor(...parts: readonly (string | number)[]): Draws {
  const unit = (label: string) => Number.parseInt(digest([...parts, label]).slice(0, 12), 16) / 2 ** 48;
  return {
    unit,
    chance: (label, probability) => unit(label) < probability,
    pick: <T>(label: string, items: readonly T[]): T => {
      const item = items[Math.floor(unit(label) * items.length)];
      if (item === undefined) throw new RangeError(`pick(${label}) from an empty list`);
      return item;
    },
    tag: (label, length = 12) => digest([...parts, "tag", label]).slice(0, length),
  };
}
