/**
 * Where `npm run eval` writes: the directory `--out` names, else a fresh
 * scratch directory (printed), so a one-task run never overwrites the
 * tracked sample report in `eval/results/`; that one is rewritten only when
 * asked (`--out eval/results`).
 */
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** The tracked sample report's directory (rewritten only with `--out eval/results`). */
export const SAMPLE_RESULTS_DIR = "eval/results";

/** The output directory: `out` resolved, or a new directory under the system's temporary directory. */
export async function outputDirectory(
  out: string | undefined,
  scratchRoot: string = os.tmpdir(),
): Promise<{ dir: string; scratch: boolean }> {
  if (out !== undefined) return { dir: path.resolve(out), scratch: false };
  return { dir: await mkdtemp(path.join(scratchRoot, "warrant-eval-")), scratch: true };
}
