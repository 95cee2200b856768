/**
 * Redacts secrets in what a server sent (a result, a resource, a prompt)
 * before anything else reads it, and records where: a `secret_redacted`
 * audit event of the call's run, or without one a log line. The audit write
 * never costs the result (an effect may already have happened).
 */
import type { Principal } from "../auth/principal.js";
import type { SecretScanner } from "../secrets/scanner.js";
import type { RunStart } from "./chain.js";
import type { AuditStore } from "./events.js";
import { recordRedactions } from "./redactions.js";

/** What a request reads from a server: where its answer goes and which fields are sensitive. */
export interface Site {
  where: "result" | "resource" | "prompt";
  server: string;
  tool: string | null;
  sensitive: readonly string[];
}

/** The call a redaction belongs to. */
export interface RedactionContext {
  principal: Principal;
  threadId: string;
  record?: { call_id: string; run_id: string; run?: RunStart | undefined } | undefined;
}

export type Redact = (raw: unknown, site: Site, context: RedactionContext) => Promise<unknown>;

export function resultRedactor(
  secrets: SecretScanner,
  audit: AuditStore | undefined,
  log: (line: string) => void,
): Redact {
  return async (raw, site, context) => {
    const { value, found } = secrets.value(raw, site.where, site.sensitive);
    if (found.length === 0) return raw;
    const record = context.record;
    const where = `${site.where} of ${site.tool ?? site.server}`;
    if (!audit || !record) {
      log(`[warrant secrets] redacted ${found.length} value(s) in a ${where} (no run to audit)\n`);
      return value;
    }
    await recordRedactions(
      audit,
      [
        {
          where: site.where,
          subject: `${site.where}:${record.call_id}:${site.tool ?? site.server}`,
          tool: site.tool,
          found,
        },
      ],
      {
        thread_id: context.threadId,
        run_id: record.run_id,
        run: record.run,
        actor: context.principal.user_id,
        node: "execute",
        at: new Date().toISOString(),
      },
    ).catch((error: unknown) =>
      log(`[warrant secrets] could not record the redaction in a ${where}: ${reasonOf(error)}\n`),
    );
    return value;
  };
}

/** The first line of an error's message, at most 200 characters (as the tool host logs reasons). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n", 1)[0] ?? "").slice(0, 200) || "unknown error";
}
