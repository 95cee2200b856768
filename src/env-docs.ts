/**
 * What each environment variable is for, as data: the source of docs/reference/environment.md (`npm run docs`).
 * Keyed by env.ts's schema, so a new variable without a description fails the type check.
 */
import type { EnvSchema } from "./env.js";

type EnvName = keyof typeof EnvSchema.shape;

export interface EnvDoc {
  /** What it sets. */
  description: string;
  /** Where it matters: every deployment must decide it, or tests only. */
  kind?: "deployment" | "tests";
}

export const ENV_DOCS: Record<EnvName, EnvDoc> = {
  DATABASE_URL: {
    description:
      "Postgres server (postgres://user@host:port/database). Unset: an embedded Postgres in the data directory.",
    kind: "deployment",
  },
  WARRANT_DATA_DIR: {
    description: "Directory of the embedded Postgres, the runtime file and the generated secret (default `.data/`).",
  },
  WARRANT_CONFIG: { description: "Path of the configuration file (default `warrant.config.json`)." },
  WARRANT_PRINCIPALS: {
    description: "Principal directory file (users, tenants, scopes, courses). Unset: the shipped dev principals.",
    kind: "deployment",
  },
  WARRANT_PLANNER: { description: "`rules` (deterministic, the default without a model) or `model`." },
  WARRANT_MODEL: { description: "The model planner's model, `provider:model` (e.g. `openai:gpt-4.1-mini`)." },
  OPENAI_BASE_URL: { description: "Endpoint of an OpenAI or OpenAI-compatible API." },
  OPENAI_API_KEY: { description: "API key for `openai:` models." },
  ANTHROPIC_API_KEY: { description: "API key for `anthropic:` models." },
  ANTHROPIC_BASE_URL: { description: "Endpoint of the Anthropic API." },
  GOOGLE_API_KEY: { description: "API key for `google-genai:` models." },
  GOOGLE_GENAI_BASE_URL: { description: "Endpoint of the Google Generative AI API." },
  WARRANT_MAX_MODEL_TURNS: { description: "Budget: planner turns (model calls) per run." },
  WARRANT_MAX_TOOL_CALLS: { description: "Budget: tool execution attempts per run, failures included." },
  WARRANT_DEADLINE_MS: { description: "Budget: wall-clock limit per run, from its first step." },
  WARRANT_MAX_REPEATS: { description: "Budget: times one action fingerprint (tool + arguments) may repeat in a run." },
  WARRANT_NO_PROGRESS_STEPS: { description: "Budget: steps without new evidence before the run stops." },
  WARRANT_MAX_TOKENS: { description: "Budget: input plus output tokens per run." },
  WARRANT_MAX_COST_USD: { description: "Budget: model cost per run in US dollars." },
  WARRANT_METRICS_TOKEN: {
    description:
      "A long-lived secret (32 to 512 printable characters) a scraper sends as `Authorization: Bearer` to " +
      "`GET /metrics`; it opens nothing else. Unset: /metrics takes operator tokens only.",
    kind: "deployment",
  },
  WARRANT_AUTH_SECRET: {
    description:
      "Key tokens are signed with and other keys are derived from (hex or base64url, at least 32 bytes); " +
      "the same on every instance. Unset: a random secret kept in the data directory.",
    kind: "deployment",
  },
  WARRANT_TOKEN: { description: "The CLI's bearer token for a running server (e.g. an identity provider's token)." },
  WARRANT_DEV_LOGIN: {
    description:
      "`1` serves the dev sign-in on any address, `0` never; unset: only on a loopback HOST with the dev directory.",
    kind: "deployment",
  },
  WARRANT_VERIFIED_CLAIMS_ONLY: {
    description: "`1`: admit a verified identity-provider token by its claims alone, without the principal directory.",
    kind: "deployment",
  },
  PORT: { description: "Port the server listens on (default 2024)." },
  HOST: {
    description: "Address the server listens on (default `127.0.0.1`, this machine only; `0.0.0.0` for others).",
    kind: "deployment",
  },
  WARRANT_MAX_BODY_BYTES: { description: "Largest request body accepted; more is 413 `body_too_large`." },
  WARRANT_RUN_LEASE_MS: { description: "How long a run's lease on its thread lives without renewal." },
  WARRANT_MAX_ACTIVE_RUNS: { description: "Runs one principal may have going at once; more is 429 `too_many_runs`." },
  WARRANT_PG_POOL_MAX: { description: "Database connections one process opens at most." },
  WARRANT_PG_BACKGROUND_POOL_MAX: { description: "Of those, connections kept for pollers and deliveries (0: shared)." },
  WARRANT_WORKERS: { description: "Processes `npm start` serves the port with (default: the cores, at most 8)." },
  WARRANT_PG_POOL_WAIT_MS: { description: "How long a query waits for a free connection before `database_busy`." },
  WARRANT_PG_QUERY_TIMEOUT_MS: {
    description: "How long a statement waits for its answer before its connection is given up.",
  },
  WARRANT_TEST_CRASH_AT: {
    description: "The process kills itself at this point of a run (crash tests).",
    kind: "tests",
  },
  WARRANT_CRON_INTERVAL_MS: { description: "How often each instance looks for crons due." },
  WARRANT_QUEUE_POLL_MS: { description: "How often each instance looks for delayed or queued runs due." },
  WARRANT_TASK_POLL_MS: {
    description:
      "How often each instance looks for MCP task waits due (a paused thread's task write; the server's own" +
      " poll interval still applies per task).",
  },
  WARRANT_MAX_CRONS: { description: "Crons one principal may have." },
  WARRANT_WEBHOOK_SECRET: {
    description: "Key webhook bodies are signed with (at least 32 characters); unset: webhooks are refused.",
  },
  WARRANT_WEBHOOK_POLL_MS: { description: "How often each instance looks for webhook deliveries due." },
  WARRANT_TEST_CRON_CLAIM_DELAY_MS: {
    description: "A pause between reading a due cron and claiming it.",
    kind: "tests",
  },
  WARRANT_CORS_ORIGINS: {
    description:
      "Comma-separated browser origins allowed to call the API (e.g. `http://localhost:3000`); none by default.",
    kind: "deployment",
  },
};
