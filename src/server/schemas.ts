/**
 * `/assistants/{id}/schemas`: what Studio and clients read to build forms.
 * The input schema is exactly what the API accepts (one user message); the
 * state schema lists every state field with the node that owns it.
 */
import { z } from "zod";
import { FIELD_OWNERS } from "../state.js";
import { RunInput } from "./requests.js";

function stateSchema(): Record<string, unknown> {
  const owners = new Map<string, string[]>();
  for (const [node, fields] of Object.entries(FIELD_OWNERS)) for (const field of fields) owners.set(field, [...(owners.get(field) ?? []), node]);
  return {
    type: "object",
    title: "AgentState",
    properties: Object.fromEntries([...owners].map(([field, nodes]) => [field, { description: `written by ${nodes.join(", ")}` }])),
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
        properties: { type: { enum: ["approve", "reject", "edit"] }, message: { type: "string" }, args: { type: "object" } },
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
    config_schema: { type: "object", properties: {}, additionalProperties: false, description: "Runs are configured by the server; clients send none." },
    context_schema: { type: "object", properties: {}, additionalProperties: false },
    resume_schema: RESUME_SCHEMA,
  };
}
