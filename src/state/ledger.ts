/**
 * The effect ledger's row: one per tool execution attempt, written before the
 * external call starts and updated after it ends. The same rows live in the
 * run state (for clients) and in Postgres (`warrant.ledger`, for recovery,
 * behind the `LedgerStore` port of src/ports.ts).
 */
import { z } from "zod";
import { TOOL_ERROR_CODES } from "../errors.js";
import { RISKS } from "../policy/contracts.js";
/** `denied`: re-checked at execution against the owner's current permissions and refused; nothing was called. */
export const LEDGER_STATUSES = ["running", "succeeded", "failed", "outcome_unknown", "abandoned", "denied"] as const;
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];

export const LedgerRowSchema = z.object({
  /** The proposal's tool_call_id: one proposal, one result. */
  call_id: z.string().min(1),
  /** 1 for the first attempt; retries and recoveries increment it. */
  attempt: z.number().int().positive(),
  tool: z.string().min(1),
  server: z.string().min(1),
  risk: z.enum(RISKS),
  /** SHA-256 of tool + canonical arguments. */
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
  /** Set for writes: one business intent, reused across attempts. */
  idempotency_key: z.string().nullable(),
  status: z.enum(LEDGER_STATUSES),
  error_code: z.enum(TOOL_ERROR_CODES).nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  elapsed_ms: z.number().int().nonnegative().nullable(),
  /**
   * On a status check made to reconcile a write (its tool is the write's
   * status tool, its call_id the write's): the attempt of the write it asked about.
   */
  reconciles: z.number().int().positive().nullable().optional(),
  /**
   * On a write attempt whose outcome was unknown and then learned from a
   * status check: that check's attempt. `succeeded` means the server confirmed
   * the write was applied; `failed` that it was not.
   */
  reconciled_by: z.number().int().positive().nullable().optional(),
  /**
   * On a write attempt: false from its intent row until the moment before the
   * request leaves the process, then true (written durably first). A `running`
   * write found with `sent: false` after a crash never reached the server: it
   * is not a send and costs none of the write's budget. Absent on reads (and
   * on rows written before the column existed: treated as possibly sent).
   */
  sent: z.boolean().optional(),
  /**
   * On a write its server answered as an MCP task: the task id, written durably the moment it arrived (before
   * any polling). A `running` row with a task id after a crash is resumed by polling that task, not reconciled.
   */
  task_id: z.string().min(1).max(256).optional(),
  /** The run (one id across the API, state, ledger, approvals and audit). */
  run_id: z.string().min(1).max(128).optional(),
  /** The run's owner: every effect acts on the owner's behalf. */
  owner: z.string().min(1).max(64).optional(),
  /** For a reviewed write: who approved it (beside the owner it runs for). */
  approved_by: z.string().min(1).max(64).optional(),
  /**
   * When the server elicited during the attempt: each question's id and how
   * it ended (`refused`: declined by the host before anyone was asked), in
   * order; never the answer. On the run state's row; the `elicitations`
   * table and the audit's `elicited` events hold the same outcomes durably.
   */
  elicitation: z
    .array(
      z.object({
        id: z.string().min(1).max(128).nullable(),
        outcome: z.enum(["accept", "decline", "cancel", "timeout", "refused"]),
      }),
    )
    .max(64)
    .optional(),
});
export type LedgerRow = z.infer<typeof LedgerRowSchema>;

/** What is written when an attempt ends (or when a status check settles an unknown outcome). */
export type LedgerOutcome = Pick<LedgerRow, "status" | "error_code" | "finished_at" | "elapsed_ms" | "reconciled_by">;
