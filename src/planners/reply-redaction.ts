/**
 * The planner's reply without secrets, at the edge where it enters a run:
 * `redactOutcome` (sanitize.ts) finds them, each redaction is recorded as a
 * `secret_redacted` audit event (src/audit/redactions.ts) before the reply
 * reaches the checkpoint.
 */
import { recordRedactions, sensitiveOf, type RedactionSite } from "../audit/redactions.js";
import { runStartOf } from "../audit/chain.js";
import type { AuditStore } from "../audit/events.js";
import type { CatalogTool } from "../policy/contracts.js";
import { scannerOf } from "../secrets/process-scanner.js";
import type { SecretScanner } from "../secrets/scanner.js";
import type { PlanOutcome } from "./planner.js";
import { redactOutcome, type PlanRedaction } from "./sanitize.js";

/**
 * The planner's reply without secrets (arguments and prose), each redaction
 * recorded before the reply reaches the checkpoint. Call after
 * `sanitizePlan`, so the call ids named are the ones kept.
 */
export async function withoutSecrets(
  outcome: PlanOutcome,
  input: {
    host: { audit(): Promise<AuditStore>; now(): number };
    tools: { catalog(): CatalogTool[]; secrets?: SecretScanner | undefined };
    threadId: string;
    run: { run_id: string; owner: string; request: string; started_at: string; turn: number };
  },
): Promise<PlanOutcome> {
  const { outcome: redacted, redactions } = redactOutcome(
    outcome,
    scannerOf(input.tools),
    sensitiveOf(input.tools.catalog()),
  );
  if (redactions.length === 0) return redacted;
  await recordRedactions(
    await input.host.audit(),
    redactions.map((entry) => siteOf(entry, input.run.turn)),
    {
      thread_id: input.threadId,
      run_id: input.run.run_id,
      run: runStartOf(input.threadId, input.run),
      actor: input.run.owner,
      node: "plan",
      at: new Date(input.host.now()).toISOString(),
    },
  );
  return redacted;
}

function siteOf(entry: PlanRedaction, turn: number): RedactionSite {
  return {
    where: entry.where,
    subject: entry.where === "arguments" ? `arguments:${entry.subject}` : `planner_text:${turn}:${entry.subject}`,
    tool: entry.tool,
    found: entry.found,
  };
}
