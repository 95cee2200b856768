/**
 * `/assistants/{id}/schemas`: what Studio and clients read to build forms.
 * The input schema is exactly what the API accepts (one user message); the
 * state schema lists every state field with the node that owns it. Fields
 * whose values the code validates with zod (decisions, denials, the run, the
 * ledger, evidence) are generated from those schemas, so they cannot drift;
 * a compile-time check ties the run's schema to its type.
 */
import { z } from "zod";
import { PrincipalSchema } from "../auth/principal.js";
import { DecisionSchema, RecordedDenialSchema } from "../policy/decision.js";
import { EvidenceSchema } from "../state/evidence.js";
import { LedgerRowSchema } from "../state/ledger.js";
import { RUN_STATUSES } from "../state/transitions.js";
import { type AgentState, FIELD_OWNERS, type RunInfo } from "../state.js";
import { RunInput } from "./runs/requests.js";

type JsonSchema = Record<string, unknown>;

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });
const object = (properties: Record<string, JsonSchema>, required: string[] = Object.keys(properties)): JsonSchema => ({
  type: "object",
  properties,
  required,
});
const string: JsonSchema = { type: "string" };
const integer: JsonSchema = { type: "integer", minimum: 0 };
const number: JsonSchema = { type: "number", minimum: 0 };
const strings: JsonSchema = { type: "array", items: string };
/** A value the server keeps for its own bookkeeping; its shape is not part of the API. */
const internal = (description: string): JsonSchema => ({
  ...nullable({ type: "object", additionalProperties: true }),
  description,
});

const MESSAGE: JsonSchema = {
  type: "object",
  properties: {
    type: { enum: ["human", "ai", "tool", "system"] },
    id: string,
    content: { anyOf: [string, { type: "array", items: { type: "object" } }] },
    tool_calls: { type: "array", items: object({ id: string, name: string, args: { type: "object" } }) },
    tool_call_id: string,
    name: string,
  },
  required: ["type", "content"],
};

/** The run in progress, as state keeps it (`RunInfo`). */
const RunInfoSchema = z.object({
  run_id: z.string(),
  request: z.string(),
  started_at: z.iso.datetime(),
  turn: z.number().int().min(0),
  owner: z.string(),
  principal: PrincipalSchema.optional(),
  /** Domain context read once at the run's start, by provider name. */
  context: z.record(z.string(), z.object({ data: z.unknown(), model_note: z.string().nullable() })).optional(),
});
// Fails to compile when RunInfo and its schema disagree, in either direction.
const _runInfoMatches: [z.infer<typeof RunInfoSchema>, RunInfo] = [{} as RunInfo, {} as z.infer<typeof RunInfoSchema>];
void _runInfoMatches;

const fromZod = (schema: z.ZodType): JsonSchema => {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return rest;
};

/** A typed JSON Schema for every state field (the API's shape of each, as `getState` returns it). */
const FIELD_SCHEMAS: Record<keyof typeof AgentState.spec, JsonSchema> = {
  messages: { type: "array", items: MESSAGE },
  status: { enum: [...RUN_STATUSES] },
  proposals: nullable({ type: "array", items: object({ call_id: string, name: string, raw_arguments: string }) }),
  decisions: nullable({ type: "array", items: fromZod(DecisionSchema) }),
  denials: { type: "array", items: fromZod(RecordedDenialSchema) },
  ledger: { type: "array", items: fromZod(LedgerRowSchema) },
  evidence: { type: "array", items: fromZod(EvidenceSchema) },
  usage: object({
    model_calls: integer,
    tool_calls: integer,
    input_tokens: integer,
    output_tokens: integer,
    cost_usd: number,
    elapsed_ms: integer,
  }),
  termination_reason: nullable(
    object(
      {
        code: string,
        detail: string,
        budget: { enum: ["model_turns", "tool_calls", "deadline", "tokens", "cost"] },
        turn: integer,
      },
      ["code", "detail", "turn"],
    ),
  ),
  result: nullable(
    object({
      answer: string,
      citations: {
        type: "array",
        items: object({ ref: string, source_id: string, page: integer, title: string }, ["ref", "source_id"]),
      },
      abstained: { type: "boolean" },
    }),
  ),
  run: nullable(fromZod(RunInfoSchema)),
  verdict: nullable({
    type: "object",
    properties: { type: { enum: ["tool_calls", "final", "needs_human", "error", "stop"] } },
    required: ["type"],
  }),
  tool_offer: nullable(
    object({ offered: strings, withheld: { type: "array", items: object({ tool: string, reason: string }) } }),
  ),
  repeats: internal("authorized action fingerprints per run"),
  call_results: nullable({
    type: "array",
    items: {
      type: "object",
      properties: { call_id: string, tool: string, ok: { type: "boolean" } },
      required: ["call_id", "tool", "ok"],
    },
  }),
  connect: nullable({
    type: "array",
    items: object({
      server: string,
      authorization_url: string,
      expires_at: string,
      requested_at: string,
      call_ids: strings,
    }),
  }),
  review_feedback: nullable(
    object({ code: { enum: ["invalid_resume", "approver_not_permitted"] }, message: string, policies: strings }, [
      "code",
      "message",
    ]),
  ),
  review_waits: internal("time spent waiting for reviewers, per call"),
  progress: internal("no-progress counters of the run"),
  pending: nullable(
    object({ provider: string, run_id: string, request: string, missing: strings, question: string }, [
      "provider",
      "run_id",
      "request",
      "missing",
      "question",
    ]),
  ),
};

/** The state schema: every field typed, with the node that writes it. */
export function stateSchema(): JsonSchema {
  const owners = new Map<string, string[]>();
  for (const [node, fields] of Object.entries(FIELD_OWNERS))
    for (const field of fields) owners.set(field, [...(owners.get(field) ?? []), node]);
  return {
    type: "object",
    title: "AgentState",
    properties: Object.fromEntries(
      Object.entries(FIELD_SCHEMAS).map(([field, schema]) => [
        field,
        { ...schema, description: `written by ${(owners.get(field) ?? ["the server"]).join(", ")}` },
      ]),
    ),
  };
}

/** The review decision a client sends as `command.resume` (see human_review). */
const RESUME_SCHEMA = {
  type: "object",
  title: "ReviewResume",
  properties: {
    decisions: {
      type: "array",
      items: {
        type: "object",
        properties: {
          type: { enum: ["approve", "reject", "edit"] },
          message: { type: "string" },
          args: { type: "object" },
        },
        required: ["type"],
      },
    },
  },
  required: ["decisions"],
};

export function assistantSchemas(graphId: string) {
  return {
    graph_id: graphId,
    input_schema: z.toJSONSchema(RunInput),
    output_schema: stateSchema(),
    state_schema: stateSchema(),
    config_schema: {
      type: "object",
      properties: {},
      additionalProperties: false,
      description: "Runs are configured by the server; clients send none.",
    },
    context_schema: { type: "object", properties: {}, additionalProperties: false },
    resume_schema: RESUME_SCHEMA,
  };
}
