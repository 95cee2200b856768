/**
 * Reading state values and interrupts defensively: what the server sends is
 * data, so each reader checks the shape it needs and drops what does not fit.
 */
import type {
  AgentValues,
  ApprovalInterrupt,
  AuthorizationRequest,
  Denial,
  Evidence,
  LedgerRow,
  RunResult,
  TerminationReason,
  Usage,
} from "./types";

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";

export function ledgerOf(values: AgentValues): LedgerRow[] {
  const rows = Array.isArray(values.ledger) ? values.ledger : [];
  const started = values.run?.started_at;
  // The ledger keeps every run of the thread; a run's rows are those started after it began.
  return rows.filter(
    (row): row is LedgerRow =>
      isRecord(row) && isString(row.tool) && isString(row.status) && (!started || row.started_at >= started),
  );
}

export function evidenceOf(values: AgentValues): Evidence[] {
  return (Array.isArray(values.evidence) ? values.evidence : []).filter(
    (item): item is Evidence => isRecord(item) && isString(item.ref) && isString(item.excerpt),
  );
}

export function resultOf(values: AgentValues): RunResult | null {
  const result = values.result;
  if (!isRecord(result) || !isString(result.answer)) return null;
  return {
    answer: result.answer,
    abstained: result.abstained === true,
    citations: Array.isArray(result.citations) ? result.citations.filter((c) => isRecord(c) && isString(c.ref)) : [],
  };
}

export function usageOf(values: AgentValues): Usage | null {
  const usage = values.usage;
  return isRecord(usage) && typeof usage.model_calls === "number" ? (usage as unknown as Usage) : null;
}

export function terminationOf(values: AgentValues): TerminationReason | null {
  const reason = values.termination_reason;
  return isRecord(reason) && isString(reason.code) ? (reason as unknown as TerminationReason) : null;
}

/** The latest run's denied calls: the state's `denials` field, entries of that run, in the order they were refused. */
export function denialsOf(values: Pick<AgentValues, "denials" | "run">): Denial[] {
  const runId = values.run?.run_id;
  const denials = Array.isArray(values.denials) ? values.denials : [];
  return denials
    .filter((denial): denial is Record<string, unknown> => isRecord(denial) && denial.run_id === runId)
    .map((denial) => ({
      call_id: String(denial.call_id ?? ""),
      tool: String(denial.tool ?? ""),
      // Shown as sent: a code or check name this page does not know yet (a newer server) is still text to show.
      code: String(denial.code ?? "") as Denial["code"],
      message: String(denial.message ?? ""),
      check: String(denial.check ?? "") as Denial["check"],
      ...(typeof denial.withheld === "string" ? { withheld: denial.withheld } : {}),
    }));
}

/** The approval request, when an interrupt value has Warrant's shape. */
export function approvalOf(value: unknown): ApprovalInterrupt | null {
  if (!isRecord(value) || !Array.isArray(value.action_requests) || !Array.isArray(value.approvals)) return null;
  return value as unknown as ApprovalInterrupt;
}

/** Only an http(s) address is a link: a `javascript:` or `data:` URL from the server is never opened. */
function webUrl(value: unknown): string | null {
  if (!isString(value)) return null;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

/** The servers the run waits to be connected to, when an interrupt value carries `authorization_required`. */
export function authorizationsOf(value: unknown): AuthorizationRequest[] {
  if (!isRecord(value) || !Array.isArray(value.authorization_required)) return [];
  return value.authorization_required.flatMap((entry): AuthorizationRequest[] => {
    if (!isRecord(entry) || !isString(entry.server) || entry.server.length === 0) return [];
    const url = webUrl(entry.authorization_url);
    if (url === null) return [];
    return [
      {
        server: entry.server.slice(0, 128),
        authorization_url: url,
        expires_at: isString(entry.expires_at) ? entry.expires_at : "",
        action_ids: Array.isArray(entry.action_ids) ? entry.action_ids.filter(isString) : [],
      },
    ];
  });
}

/** A write's MCP task the thread waits for (a `task_wait` interrupt): the server resumes the thread when it ends. */
export interface WaitedTask {
  server: string;
  tool: string;
  task_id: string;
}

/** The tasks the thread waits for, when an interrupt value is a `task_wait` (never a review: nothing to decide). */
export function taskWaitsOf(value: unknown): WaitedTask[] {
  if (!isRecord(value) || value.kind !== "task_wait" || !Array.isArray(value.tasks)) return [];
  return value.tasks.flatMap((entry): WaitedTask[] =>
    isRecord(entry) && isString(entry.server) && isString(entry.tool) && isString(entry.task_id)
      ? [{ server: entry.server.slice(0, 128), tool: entry.tool.slice(0, 128), task_id: entry.task_id.slice(0, 256) }]
      : [],
  );
}
