/**
 * The parts of Warrant's state and interrupt the page reads (src/state.ts,
 * src/policy/approval.ts), imported from the server's types where they are exported. Everything arrives over the network, so readers
 * use the guards in `read.ts` rather than trusting these shapes.
 */
import type { InterruptPayload, ResumeDecision as ServerResumeDecision } from "../../src/policy/resume.js";
import type { RecordedDenial } from "../../src/policy/decision.js";

export interface LedgerRow {
  call_id: string;
  attempt: number;
  tool: string;
  server: string;
  risk: string;
  status: string;
  error_code: string | null;
  started_at: string;
  finished_at: string | null;
  elapsed_ms: number | null;
  /** For a write its server runs as an MCP task: the task id, recorded when the task began. */
  task_id?: string;
}

export interface Evidence {
  ref: string;
  source_id: string;
  item_id: string;
  excerpt: string;
  title?: string;
  page?: number;
  version: string;
  tool: string;
}

export interface Citation {
  ref: string;
  source_id: string;
  page?: number;
  title?: string;
}

export interface RunResult {
  answer: string;
  citations: Citation[];
  abstained: boolean;
}

export interface Usage {
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
  elapsed_ms: number;
}

export interface TerminationReason {
  code: string;
  detail: string;
  budget?: string;
}

/**
 * A denied call as the page shows it: the fields it reads of the server's
 * recorded denial, whose type is inferred from the zod schema the server
 * validates with (`RecordedDenialSchema`, src/policy/decision.ts).
 */
export type Denial = Pick<RecordedDenial, "call_id" | "tool" | "code" | "message" | "check" | "withheld">;

export interface RunInfo {
  run_id: string;
  request: string;
  started_at: string;
}

export interface AgentValues {
  messages?: unknown[];
  status?: string;
  ledger?: LedgerRow[];
  evidence?: Evidence[];
  usage?: Usage;
  termination_reason?: TerminationReason | null;
  result?: RunResult | null;
  decisions?: unknown[];
  /** Every denied call of the thread, each with its `run_id` (append-only). */
  denials?: unknown[];
  run?: RunInfo | null;
  [key: string]: unknown;
}

/**
 * The approval request (agent-chat-ui's HITL format plus Warrant's binding):
 * the server's own interrupt type (src/policy/approval.ts).
 */
export type ApprovalInterrupt = InterruptPayload;

/** A server the run needs the owner's permission for (the `authorization_required` interrupt, one per server). */
export interface AuthorizationRequest {
  server: string;
  /** The authorization server's page, opened in a new tab; its callback resumes the run server-side. */
  authorization_url: string;
  expires_at: string;
  action_ids: string[];
}

/** One decision of a resume value, inferred from the schema the server validates it with (`ResumeDecisionSchema`). */
export type ResumeDecision = ServerResumeDecision;

export interface ToolInfo {
  name: string;
  server: string;
  risk: string;
  description: string;
  schema: JsonSchema;
}

export interface Budgets {
  model_turns: number;
  tool_calls: number;
  deadline_ms: number;
  tokens: number;
  max_repeats: number;
  no_progress_steps: number;
}

export interface SessionInfo {
  principal: { user_id: string; display_name: string; tenant: string; role: string; scopes: string[] };
  budgets: Budgets;
  tools: ToolInfo[];
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  description?: string;
  format?: string;
  items?: JsonSchema;
}
