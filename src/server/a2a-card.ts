/**
 * The agent card of a served assistant (A2A v1.0, as `@a2a-js/sdk` types
 * it): one JSON-RPC endpoint at `/a2a/{assistant_id}`, offered for protocol
 * 1.0 and 0.3, bearer tokens (or `X-Api-Key`), text in, text and JSON out.
 */
import type { AgentCard } from "@a2a-js/sdk";

const VERSION = "0.1.0";

const SKILLS: Record<string, { name: string; description: string; tags: string[]; examples: string[] }> = {
  agent: {
    name: "Notes and study plans",
    description: [
      "Answers from the caller's course notes with citations,",
      "and plans study sessions into the caller's calendar;",
      "every calendar write waits for a human review in Warrant's inbox (the task is input-required until then).",
    ].join(" "),
    tags: ["notes", "citations", "study-plan", "calendar", "human-review"],
    examples: [
      "Compare self-attention with cross-attention using my notes",
      [
        "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day,",
        "starting 2026-12-02 at 18:00 UTC, and put it in my calendar",
      ].join(" "),
    ],
  },
  workflow: {
    name: "Notes and study plans (fixed workflow)",
    description:
      "The same tasks on a fixed workflow with no model choices; calendar writes wait for a human review as with the agent.",
    tags: ["notes", "study-plan", "workflow", "human-review"],
    examples: ["Compare self-attention with cross-attention using my notes"],
  },
};

export function agentCardFor(assistantId: string, origin: string): AgentCard {
  const url = `${origin}/a2a/${encodeURIComponent(assistantId)}`;
  const skill = SKILLS[assistantId] ?? {
    name: assistantId,
    description: `The Warrant assistant ${assistantId}.`,
    tags: ["warrant"],
    examples: [],
  };
  return {
    name: `Warrant ${assistantId}`,
    description: [
      "A controlled tool-calling agent: the model only proposes actions; policy,",
      "budgets and a human review decide what runs, on the caller's behalf.",
    ].join(" "),
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
    ],
    provider: { organization: "Warrant", url: origin },
    version: VERSION,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: {
            description:
              "A Warrant API token (or the identity provider's token), as Authorization: Bearer or X-Api-Key.",
            scheme: "Bearer",
            bearerFormat: "JWT",
          },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: assistantId,
        name: skill.name,
        description: skill.description,
        tags: skill.tags,
        examples: skill.examples,
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
