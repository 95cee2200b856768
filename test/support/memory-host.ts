/**
 * An in-memory host for unit tests (no processes, no database): a catalog of
 * fake tools with canned results, an in-memory ledger, a given planner.
 */
import type { Principal } from "../../src/auth/principal.js";
import { contextProviders } from "../../src/domains/index.js";
import { loadSettings, type Budgets } from "../../src/env.js";
import { ReviewPolicySchema, type ReviewPolicy } from "../../src/policy/config.js";
import type { Host } from "../../src/host.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { NormalizedResult } from "../../src/mcp/normalize.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import type { Planner } from "../../src/planners/planner.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import type { ApprovalRecord, ApprovalStore, LedgerStore } from "../../src/ports.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import type { AuditEvent, AuditStore } from "../../src/audit/events.js";

export function memoryLedger(): LedgerStore & { rows: Map<string, LedgerRow[]> } {
  const rows = new Map<string, LedgerRow[]>();
  const threadRows = (threadId: string) => rows.get(threadId) ?? rows.set(threadId, []).get(threadId) ?? [];
  return {
    rows,
    async begin(threadId, row) {
      const list = threadRows(threadId);
      if (list.some((existing) => existing.call_id === row.call_id && existing.attempt === row.attempt))
        throw new Error("duplicate ledger row");
      list.push({ ...row });
    },
    async beginFirst(threadId, row) {
      if (threadRows(threadId).some((existing) => existing.call_id === row.call_id)) return false;
      threadRows(threadId).push({ ...row });
      return true;
    },
    async finish(threadId, callId, attempt, outcome) {
      const row = threadRows(threadId).find((existing) => existing.call_id === callId && existing.attempt === attempt);
      if (!row) throw new Error("no such ledger row");
      Object.assign(row, {
        status: outcome.status,
        error_code: outcome.error_code,
        finished_at: outcome.finished_at,
        elapsed_ms: outcome.elapsed_ms,
      });
      if (outcome.reconciled_by) row.reconciled_by = outcome.reconciled_by;
    },
    async list(threadId) {
      return threadRows(threadId).map((row) => ({ ...row }));
    },
    async latest(threadId, callId) {
      return threadRows(threadId)
        .filter((row) => row.call_id === callId)
        .sort((a, b) => b.attempt - a.attempt)[0];
    },
  };
}

const NOTE_SCHEMA = {
  type: "object",
  properties: { user_id: { type: "string" }, note_id: { type: "string", maxLength: 100 } },
  required: ["user_id", "note_id"],
};
const EVENT_SCHEMA = {
  type: "object",
  properties: { user_id: { type: "string" }, title: { type: "string", maxLength: 200 } },
  required: ["user_id", "title"],
};

/** Two fake tools: `read_note` (read) and `create_event` (a write that needs approval). */
export function memoryTools(
  results: (tool: string, args: Record<string, unknown>) => NormalizedResult,
): ToolHost & { calls: { tool: string; args: Record<string, unknown> }[] } {
  const listed: Record<string, ListedTool[]> = {
    fake: [
      { name: "read_note", description: "read a note", inputSchema: NOTE_SCHEMA },
      { name: "create_event", description: "create an event", inputSchema: EVENT_SCHEMA },
    ],
  };
  const contracts = {
    read_note: ToolContractSchema.parse({
      server: "fake",
      risk: "read",
      scopes: ["notes:read"],
      injected: { user_id: "principal.user_id" },
    }),
    create_event: ToolContractSchema.parse({
      server: "fake",
      risk: "write_reversible",
      scopes: ["notes:read"],
      injected: { user_id: "principal.user_id" },
    }),
  };
  const { tools } = buildCatalog(contracts, listed);
  const calls: { tool: string; args: Record<string, unknown> }[] = [];
  return {
    calls,
    maxTools: 8,
    catalog: () => tools,
    isHealthy: () => true,
    isListed: (name) => tools.some((tool) => tool.name === name),
    async call(tool, args) {
      calls.push({ tool: tool.name, args });
      return results(tool.name, args);
    },
    async readResource() {
      return { ok: false, code: "tool_not_permitted", message: "no resources in memory" };
    },
    async getPrompt() {
      return { ok: false, code: "tool_not_permitted", message: "no prompts in memory" };
    },
    async close() {},
  };
}

/** Approval records in memory, with the same keep-the-first rule as the table. */
export function memoryApprovals(): ApprovalStore & { rows: ApprovalRecord[] } {
  const rows: ApprovalRecord[] = [];
  return {
    rows,
    async record(records) {
      for (const record of records) {
        const exists = rows.some(
          (row) =>
            row.thread_id === record.thread_id && row.action_id === record.action_id && row.version === record.version,
        );
        if (!exists) rows.push({ ...record });
      }
    },
    async list(threadId) {
      return rows.filter((row) => row.thread_id === threadId).map((row) => ({ ...row }));
    },
  };
}

/** Audit events in memory, with the table's one-event-per-key rule. */
export function memoryAudit(): AuditStore & { events: AuditEvent[] } {
  const events: AuditEvent[] = [];
  const key = (event: AuditEvent) => [event.thread_id, event.run_id, event.kind, event.subject].join("\u0000");
  return {
    events,
    async record(records) {
      for (const record of records) if (!events.some((event) => key(event) === key(record))) events.push({ ...record });
    },
    async list(threadId) {
      return events.filter((event) => event.thread_id === threadId).map((event) => ({ ...event }));
    },
  };
}

export function memoryHost(options: {
  planner: Planner;
  tools: ToolHost;
  budgets?: Partial<Budgets>;
  now?: () => number;
  /** The principal directory as it is now (default: everyone stays as verified). */
  currentPrincipal?: (principal: Principal) => Promise<Principal>;
  reviewPolicy?: ReviewPolicy;
}): Host & {
  ledgerStore: ReturnType<typeof memoryLedger>;
  approvalStore: ReturnType<typeof memoryApprovals>;
  auditStore: ReturnType<typeof memoryAudit>;
} {
  const ledgerStore = memoryLedger();
  const approvalStore = memoryApprovals();
  const auditStore = memoryAudit();
  return {
    budgets: { ...loadSettings({}).budgets, ...options.budgets },
    tools: async () => options.tools,
    planner: async () => options.planner,
    ledger: async () => ledgerStore,
    approvals: async () => approvalStore,
    audit: async () => auditStore,
    reviewPolicy: async () => options.reviewPolicy ?? ReviewPolicySchema.parse(undefined),
    currentPrincipal: options.currentPrincipal ?? (async (principal) => principal),
    contextProviders,
    now: options.now ?? Date.now,
    ledgerStore,
    approvalStore,
    auditStore,
  };
}
