/**
 * The shared vocabulary of the control plane, at the bottom of the import
 * graph: risks, tool contracts (as `warrant.config.json` states them) and
 * catalog entries (a contract joined with what its server lists). Imports
 * nothing of ours.
 */
import { z } from "zod";

/** Tool and server names: what a contract key and an MCP name may look like. */
export const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export const RISKS = ["read", "write_reversible", "write_irreversible"] as const;
export type Risk = (typeof RISKS)[number];

/** Where a run-bound value comes from: the first match of a pattern in the request text. */
export const RunBoundSchema = z
  .object({
    from_request: z
      .string()
      .min(1)
      .max(200)
      .refine((pattern) => {
        try {
          new RegExp(pattern);
          return true;
        } catch {
          return false;
        }
      }, "is not a valid regular expression"),
  })
  .strict();
export type RunBoundRule = z.infer<typeof RunBoundSchema>;

/** Where a host-injected argument's value comes from. */
export const INJECTION_SOURCES = [
  "principal.user_id",
  "principal.tenant",
  "run.thread_id",
  "action.idempotency_key",
] as const;

/** How a write's status tool is asked and read. */
export const ReconcileSchema = z
  .object({
    /** A contracted `read` tool on the same server. */
    tool: z.string().regex(NAME),
    /** The status tool's argument that receives the write's idempotency key. */
    key_argument: z.string().min(1),
    /** The boolean field of its structured result that says whether the write was applied. */
    applied_field: z.string().min(1).default("applied"),
  })
  .strict();
export type ReconcileContract = z.infer<typeof ReconcileSchema>;

export const ToolContractSchema = z
  .object({
    server: z.string().regex(NAME),
    /** The tool's name on its server, when it differs from the name the agent uses. */
    remote_name: z.string().min(1).optional(),
    version: z.string().default("1"),
    description: z.string().min(1).max(2000).optional(),
    risk: z.enum(RISKS),
    scopes: z.array(z.string().min(1)).default([]),
    stages: z.array(z.string().min(1)).default(["any"]),
    timeout_ms: z.number().int().min(100).max(600_000).default(10_000),
    max_attempts: z.number().int().min(1).max(5).default(1),
    /**
     * Arguments whose value is fixed for the whole run by the host, from the
     * request (never from the model): `{ "case_id": { "from_request": "C-\\d{3,}" } }`
     * takes the first match of the pattern in the request text. A call whose
     * argument differs, or a run that fixed no value, is `access_denied`.
     */
    run_bound: z.record(z.string().min(1).max(64), RunBoundSchema).default({}),
    injected: z.record(z.string().min(1), z.enum(INJECTION_SOURCES)).default({}),
    /** Resource check before any existence check: the value of `argument` must map into the principal's `principal_field`. */
    resource: z
      .object({
        argument: z.string().min(1),
        /** Regex with one capture group that extracts the resource's owner key (e.g. the course) from the argument. */
        pattern: z.string().min(1),
        /** `tenant`, or the name of one of the principal's grants (e.g. `courses`). */
        principal_field: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/),
      })
      .strict()
      .optional(),
    max_string_chars: z.number().int().min(1).max(100_000).default(2_000),
    output: z
      .object({
        max_items: z.number().int().min(1).max(1_000).default(10),
        max_chars: z.number().int().min(100).max(200_000).default(8_000),
      })
      .strict()
      .default({ max_items: 10, max_chars: 8_000 }),
    always_available: z.boolean().default(false),
    /** How long a reviewer has to decide on this tool's approval request. */
    approval_ttl_ms: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 3_600_000)
      .default(15 * 60_000),
    /**
     * For a write: the read tool that says whether an idempotency key was
     * applied. A write whose outcome is unknown (timeout, lost response, crash)
     * is reconciled through it instead of being re-run blindly (DESIGN §6, §9).
     */
    reconcile: ReconcileSchema.optional(),
    /**
     * For a write: the server may answer it as a task (the MCP tasks extension, `io.modelcontextprotocol/tasks`,
     * on the 2026-07-28 revision). The host then declares the extension on this tool's calls, records the task id
     * on the call's ledger row before anything else, and polls the task (bounded by `timeout_ms`); after a crash
     * polling resumes from the recorded id (src/mcp/tasks.ts).
     */
    task: z.boolean().optional(),
    /**
     * Field names (at any depth) of this tool's arguments and results whose
     * values are secrets whatever they look like: they are replaced by a
     * redaction marker before the model, the checkpoint or any record sees
     * them (src/secrets/scanner.ts).
     */
    sensitive: z.array(z.string().min(1).max(64)).max(64).optional(),
    /**
     * The manifest hash the tool's definition must have (`sha256:<64 hex>`, as
     * `npm run tools -- diff NAME` prints it). Wins over the pin in the
     * database: a served definition with another hash is withheld
     * (`definition_changed`) until this pin changes.
     */
    pin: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, "must be sha256: and 64 lowercase hex digits")
      .optional(),
  })
  .strict();
export type ToolContract = z.infer<typeof ToolContractSchema>;

/** MCP tool annotations: hints only, they never authorize anything. */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The MCP spec's defaults for hints a server leaves out. */
export const DEFAULT_HINTS: ToolHints = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/** A contracted tool its server lists: what the control plane checks and calls. */
export interface CatalogTool {
  /** Name the agent and the model use. */
  name: string;
  /** Name on the MCP server. */
  remote_name: string;
  server: string;
  contract: ToolContract;
  description: string;
  /** JSON Schema of the model-visible arguments. */
  model_schema: Record<string, unknown>;
  hints: ToolHints;
  /** Set when the server now serves a definition other than the pinned one: the tool is withheld until approved. */
  definition_changed?: { pinned_hash: string; served_hash: string };
}

/** A tool as a planner sees it: name, description and the arguments the model may set. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the model-visible arguments (host-injected arguments removed). */
  parameters: Record<string, unknown>;
}

/** One proposed tool call, arguments kept as the raw text the planner produced. */
export interface Proposal {
  /** The tool_call_id: one proposal, one result. */
  call_id: string;
  name: string;
  /** The argument text exactly as proposed; `authorize` parses it strictly. */
  raw_arguments: string;
  /**
   * Set by the plan node when the planner's tool name or call id could not
   * be kept (control, bidi or zero-width characters; see planners/sanitize):
   * the name or id above is then a safe replacement, and decide denies the
   * proposal with this typed error, so the model sees why.
   */
  refusal?: { code: "unknown_tool" | "invalid_arguments"; message: string };
}

/** What a planner is shown for a tool. */
export function toToolSpec(tool: CatalogTool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.model_schema };
}

/** How many times one write intent may be sent in total: the first attempt and one retry after a "not applied". */
export const MAX_WRITE_SENDS = 2;
