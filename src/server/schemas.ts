/**
 * `/assistants/{id}/schemas`: what Studio and clients read to build forms.
 * The input schema is exactly what the API accepts (one user message); the
 * state schema lists every state field with the node that owns it.
 */
import { z } from "zod";
import { EvidenceSchema } from "../runtime/evidence.js";
import { LedgerRowSchema } from "../runtime/ledger.js";
import { RUN_STATUSES } from "../runtime/transitions.js";
import { type AgentState, FIELD_OWNERS } from "../state.js";
import { RunInput } from "./requests.js";

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

/** A typed JSON Schema for every state field (the API's shape of each, as `getState` returns it). */
const FIELD_SCHEMAS: Record<keyof typeof AgentState.spec, JsonSchema> = {
  messages: { type: "array", items: MESSAGE },
  status: { enum: [...RUN_STATUSES] },
  proposals: nullable({ type: "array", items: object({ call_id: string, name: string, raw_arguments: string }) }),
  decisions: nullable({
    type: "array",
    items: {
      type: "object",
      properties: {
        type: { enum: ["allow", "deny", "review"] },
        call_id: string,
        tool: string,
        code: string,
        message: string,
      },
      required: ["type", "call_id"],
    },
  }),
  ledger: { type: "array", items: z.toJSONSchema(LedgerRowSchema, { io: "input" }) },
  evidence: { type: "array", items: z.toJSONSchema(EvidenceSchema, { io: "input" }) },
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
  run: nullable(
    object(
      {
        run_id: string,
        request: string,
        started_at: { type: "string", format: "date-time" },
        turn: integer,
        owner: string,
        course_context: internal("the course a quiz names"),
      },
      ["run_id", "request", "started_at", "turn", "owner"],
    ),
  ),
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
  review_feedback: nullable(object({ code: { enum: ["invalid_resume", "approver_not_permitted"] }, message: string })),
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
