/**
 * Evidence: what tool results established, with a stable reference that a
 * final answer may cite. Tool output is evidence, never instructions.
 */
import { z } from "zod";

export const EvidenceSchema = z.object({
  /** Stable reference cited by answers, e.g. `cs301/lecture-07#p3`. */
  ref: z.string().min(1),
  source_id: z.string().min(1),
  /** The item the tool returned it for, e.g. a note id. */
  item_id: z.string().min(1),
  excerpt: z.string(),
  title: z.string().optional(),
  page: z.number().int().optional(),
  version: z.string(),
  tool: z.string(),
  call_id: z.string(),
});
export type Evidence = z.infer<typeof EvidenceSchema>;

/** Reducer for `evidence`: merge by ref, a newer entry for a ref replaces the older. */
export function mergeEvidence(current: Evidence[], update: Evidence[]): Evidence[] {
  const byRef = new Map(current.map((item) => [item.ref, item]));
  for (const item of update) byRef.set(item.ref, item);
  return [...byRef.values()];
}
