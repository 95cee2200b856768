/**
 * Secrets stay out, at the edges where untrusted values enter a run: the
 * planner's reply (plan, src/planners/reply-redaction.ts), a reviewer's
 * resume value (human_review, here) and tool results (the tool host, through
 * result-redaction.ts). Each redaction is an audit event (`secret_redacted`)
 * naming where it happened: the tool, the argument or result path, the kind
 * and the marker, never the value. The scanning itself is src/secrets/.
 */
import type { CatalogTool } from "../policy/contracts.js";
import { scannerOf } from "../secrets/process-scanner.js";
import { markersIn, redactionDetail, type Redaction, type SecretScanner } from "../secrets/scanner.js";
import { runStartOf, sha256Hex, type RunStart } from "./chain.js";
import type { AuditEvent, AuditStore } from "./events.js";

/** The audit kind and code of a redaction event. */
export const SECRET_REDACTED = "secret_redacted" as const;

/** One place where values were redacted, as the audit records it. */
export interface RedactionSite {
  where: string;
  /** Unique within the run for this site (e.g. `arguments:<call_id>`): a replayed node adds no second event. */
  subject: string;
  tool: string | null;
  found: readonly Redaction[];
}

/** Records each site as a `secret_redacted` audit event, chained into the run when its start is known. */
export async function recordRedactions(
  audit: AuditStore,
  sites: readonly RedactionSite[],
  at: {
    thread_id: string;
    run_id: string;
    run?: RunStart | undefined;
    actor: string;
    node: AuditEvent["node"];
    at: string;
  },
): Promise<void> {
  const events = sites
    .filter((site) => site.found.length > 0)
    .map((site) => ({
      thread_id: at.thread_id,
      run_id: at.run_id,
      kind: SECRET_REDACTED,
      subject: site.subject,
      node: at.node,
      actor: at.actor,
      code: SECRET_REDACTED,
      tool: site.tool,
      detail: redactionDetail(site.where, site.found),
      at: at.at,
    }));
  if (events.length > 0) await audit.record(events, at.run);
}

/** What the redaction of a resume value reads of the host (the Host of src/host.ts is one). */
export interface RedactionHost {
  audit(): Promise<AuditStore>;
  now(): number;
  tools(): Promise<{ catalog(): CatalogTool[]; secrets?: SecretScanner | undefined }>;
}

/** The contract's sensitive argument names of a tool, by name. */
export function sensitiveOf(catalog: readonly CatalogTool[]): (name: string) => readonly string[] {
  return (name) => catalog.find((tool) => tool.name === name)?.contract.sensitive ?? [];
}

/**
 * A reviewer's resume value without secrets (an edit's arguments, a
 * rejection's message), sensitive fields of the pending tools included.
 * Markers already in the value (the API redacted it on arrival) are
 * recorded as redactions too. Called after the approver check and before the value is bound, so an edit
 * goes through the checks, the approval record and the effect redacted.
 */
export async function withoutSecretsInResume(
  answer: unknown,
  input: {
    host: RedactionHost;
    threadId: string;
    run: { run_id: string; owner: string; request: string; started_at: string } | null | undefined;
    approver: string;
    tools: readonly string[];
  },
): Promise<unknown> {
  const tools = await input.host.tools();
  const sensitive = [...new Set(input.tools.flatMap((name) => sensitiveOf(tools.catalog())(name)))];
  const { value, found: now } = scannerOf(tools).value(answer, "resume", sensitive);
  // The API and the CLI redact secret shapes before the value is checkpointed (process-scanner.ts); their markers are recorded here.
  const found = [...markersIn(answer, "resume"), ...now];
  if (found.length === 0) return answer;
  const run = input.run;
  await recordRedactions(
    await input.host.audit(),
    // One event per distinct answer: the same refused value sent again is not a second redaction event.
    [
      {
        where: "resume",
        subject: `resume:${sha256Hex(JSON.stringify(value)).slice(0, 16)}`,
        tool: input.tools.length === 1 ? (input.tools[0] ?? null) : null,
        found,
      },
    ],
    {
      thread_id: input.threadId,
      run_id: run?.run_id ?? "",
      run: runStartOf(input.threadId, run),
      actor: input.approver,
      node: "human_review",
      at: new Date(input.host.now()).toISOString(),
    },
  );
  return value;
}
