/**
 * The only module that reads `process.env`. It returns a fully defaulted,
 * validated settings object; everything else receives settings as arguments.
 */
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ConfigError } from "./errors.js";
import { parseModelName } from "./model-name.js";

/**
 * Repository root, resolved from this file: the folder above src/ under tsx and the LangGraph CLI, and the same
 * folder when `npm start` runs the compiled copy in `.build/src/` (scripts/build-server.mjs).
 */
export const REPO_ROOT = repositoryRoot(path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."));

/**
 * `above` (the folder above src/), or the folder above that when `above` is the compiled tree (named `.build`, with
 * no package.json).
 */
function repositoryRoot(above: string): string {
  const compiled = path.basename(above) === ".build" && !existsSync(path.join(above, "package.json"));
  return compiled ? path.dirname(above) : above;
}

const positiveInt = (fallback: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a positive integer")
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n > 0, "must be a positive integer")
    .optional()
    .transform((n) => n ?? fallback);

/** A positive amount of US dollars, e.g. `1.00` or `0.25`. */
const positiveUsd = (fallback: number) =>
  z
    .string()
    .regex(/^[0-9]+(\.[0-9]+)?$/, "must be a positive amount in USD, e.g. 1.00")
    .transform(Number)
    .refine((n) => Number.isFinite(n) && n > 0, "must be a positive amount in USD, e.g. 1.00")
    .optional()
    .transform((n) => n ?? fallback);

const databaseUrl = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value.trim()))
  .superRefine((value, context) => {
    if (value === undefined) return;
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      context.addIssue({ code: "custom", message: "is not a URL (expected postgres://user@host:port/database)" });
      return;
    }
    if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
      context.addIssue({ code: "custom", message: `has protocol ${parsed.protocol}, expected postgres:` });
    }
    if (parsed.hostname === "") context.addIssue({ code: "custom", message: "has no host" });
  });

export const EnvSchema = z.object({
  DATABASE_URL: databaseUrl,
  WARRANT_DATA_DIR: z.string().min(1).optional(),
  WARRANT_CONFIG: z.string().min(1).optional(),
  WARRANT_PRINCIPALS: z.string().min(1).optional(),
  WARRANT_PLANNER: z.enum(["rules", "model"]).optional(),
  WARRANT_MODEL: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.string().url().optional(),
  GOOGLE_API_KEY: z.string().min(1).optional(),
  GOOGLE_GENAI_BASE_URL: z.string().url().optional(),
  WARRANT_MAX_MODEL_TURNS: positiveInt(8),
  WARRANT_MAX_TOOL_CALLS: positiveInt(12),
  WARRANT_DEADLINE_MS: positiveInt(120_000),
  WARRANT_MAX_REPEATS: positiveInt(2),
  WARRANT_NO_PROGRESS_STEPS: positiveInt(3),
  WARRANT_MAX_TOKENS: positiveInt(200_000),
  WARRANT_MAX_COST_USD: positiveUsd(1),
  WARRANT_AUTH_SECRET: z.string().min(1).optional(),
  WARRANT_METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{32,512}$/, "must be 32 to 512 printable characters without spaces (a long random secret)")
    .optional(),
  /** The CLI's bearer token from the identity provider (`npm run token -- --device`); printable ASCII, no spaces. */
  WARRANT_TOKEN: z
    .string()
    .max(12_288)
    .regex(/^[\x21-\x7e]+$/, { message: "must be one token: printable ASCII without spaces" })
    .optional(),
  WARRANT_DEV_LOGIN: z.enum(["0", "1"], { message: "must be 0 or 1" }).optional(),
  WARRANT_VERIFIED_CLAIMS_ONLY: z.enum(["0", "1"], { message: "must be 0 or 1" }).optional(),
  PORT: z
    .string()
    .regex(/^[0-9]{1,5}$/, "must be a port number")
    .transform(Number)
    .refine((n) => n >= 0 && n <= 65535, "must be a port number")
    .optional(),
  HOST: z.string().min(1).max(255).optional(),
  WARRANT_MAX_BODY_BYTES: positiveInt(1024 * 1024),
  WARRANT_RUN_LEASE_MS: positiveInt(30_000),
  WARRANT_MAX_ACTIVE_RUNS: positiveInt(4),
  WARRANT_PG_POOL_MAX: positiveInt(10),
  WARRANT_PG_BACKGROUND_POOL_MAX: z
    .string()
    .regex(/^[0-9]{1,4}$/, "must be a whole number (0: background work shares the requests' connections)")
    .transform(Number)
    .optional()
    .transform((n) => n ?? 2),
  WARRANT_WORKERS: z
    .string()
    .regex(/^[0-9]{1,3}$/, "must be a whole number of worker processes from 1 to 64")
    .transform(Number)
    .refine((n) => n >= 1 && n <= 64, "must be a whole number of worker processes from 1 to 64")
    .optional(),
  WARRANT_PG_POOL_WAIT_MS: positiveInt(5_000),
  WARRANT_PG_QUERY_TIMEOUT_MS: positiveInt(30_000),
  WARRANT_TEST_CRASH_AT: z
    .enum(["after_lease", "after_run_row", "after_first_event", "after_final_checkpoint", "after_run_end"])
    .optional(),
  WARRANT_CRON_INTERVAL_MS: positiveInt(5_000),
  WARRANT_QUEUE_POLL_MS: positiveInt(500),
  WARRANT_TASK_POLL_MS: positiveInt(1_000),
  WARRANT_MAX_CRONS: positiveInt(10),
  WARRANT_WEBHOOK_SECRET: z.string().min(32, "must be at least 32 characters").max(512).optional(),
  WARRANT_WEBHOOK_POLL_MS: positiveInt(1_000),
  WARRANT_TEST_CRON_CLAIM_DELAY_MS: positiveInt(0).optional(),
  WARRANT_CORS_ORIGINS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? "")
        .split(",")
        .map((origin) => origin.trim())
        .filter((origin) => origin !== ""),
    )
    .refine(
      (origins) => origins.every((origin) => /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/.test(origin)),
      "must be a comma-separated list of origins like http://localhost:3000",
    ),
});

/** Hard per-run limits. A run that reaches one stops with `budget_exhausted`. */
export interface Budgets {
  /** Planner turns (model calls) per run. */
  model_turns: number;
  /** Tool execution attempts per run; every call of a parallel response counts, failures too. */
  tool_calls: number;
  /** Wall-clock limit per run, from its first step. */
  deadline_ms: number;
  /** Input plus output tokens per run. */
  tokens: number;
  /** Model cost per run in USD, from the prices in the config's `models` (an unpriced model costs 0). */
  cost_usd: number;
  /** How many times one action fingerprint may be authorized per run. */
  max_repeats: number;
  /** Consecutive observe steps without new evidence before the run stops. */
  no_progress_steps: number;
}

/**
 * The default `WARRANT_WORKERS` is the machine's available parallelism, at most this many: every worker starts its own
 * MCP servers and takes its share of the pool, so a 64-core host does not start 64 sets of them (src/cluster/README.md).
 */
export const DEFAULT_WORKERS_CAP = 8;

export interface Settings {
  databaseUrl: string | undefined;
  /**
   * `WARRANT_WORKERS`: processes `npm start` serves the port with (node:cluster), each with its share of the pool;
   * default the available parallelism, at most {@link DEFAULT_WORKERS_CAP} and at most `WARRANT_PG_POOL_MAX`.
   * 1 is one process, as before workers existed. Unset in settings built by hand: 1.
   */
  workers?: number;
  /** The process's one Postgres pool (server mode; the embedded database always has one connection). */
  pool: {
    /** `WARRANT_PG_POOL_MAX`: connections this process opens at most. */
    max: number;
    /**
     * `WARRANT_PG_BACKGROUND_POOL_MAX`: of those, the ones kept for pollers and deliveries (0: shared);
     * requests keep at least 3.
     */
    backgroundMax: number;
    /** `WARRANT_PG_POOL_WAIT_MS`: how long a query waits for a free connection before failing with `database_busy`. */
    waitMs: number;
    /** `WARRANT_PG_QUERY_TIMEOUT_MS`: how long a statement waits for its answer before its connection is given up. */
    queryTimeoutMs: number;
  };
  dataDir: string;
  configPath: string;
  principalsPath: string;
  /**
   * `WARRANT_VERIFIED_CLAIMS_ONLY=1`: the server never consults the principal directory; a verified
   * token's claims are the principal until it expires (token revocations still apply). Default: the
   * directory is authoritative, and a user it does not list (or lists under another tenant) is refused.
   */
  verifiedClaimsOnly: boolean;
  planner: "rules" | "model";
  /**
   * `WARRANT_MODEL` (`provider:model`, checked at start by `parseModelName`) and its endpoint:
   * `OPENAI_BASE_URL`/`OPENAI_API_KEY` for `openai:` and `openai-compatible:`,
   * `ANTHROPIC_BASE_URL`/`ANTHROPIC_API_KEY` for `anthropic:`,
   * `GOOGLE_GENAI_BASE_URL`/`GOOGLE_API_KEY` for `google-genai:`.
   */
  model: {
    name: string;
    baseUrl: string | undefined;
    apiKey: string | undefined;
    anthropicBaseUrl?: string | undefined;
    anthropicApiKey?: string | undefined;
    googleBaseUrl?: string | undefined;
    googleApiKey?: string | undefined;
  };
  budgets: Budgets;
  server: {
    /** `WARRANT_AUTH_SECRET`; unset means a random secret kept in `<dataDir>/auth-secret`. */
    authSecret: string | undefined;
    /** `WARRANT_TOKEN`: the token the CLI sends to a running server instead of minting one (an IdP's token). */
    token: string | undefined;
    /** `WARRANT_METRICS_TOKEN`: a long-lived secret a scraper sends to `GET /metrics` (and nothing else); unset: none. */
    metricsToken?: string | undefined;
    port: number;
    host: string;
    /** Requests with a larger body are refused with 413. */
    maxBodyBytes: number;
    /**
     * `WARRANT_RUN_LEASE_MS`: how long a run's lease on its thread lives
     * without a heartbeat, i.e. how soon a run left by a crashed server can
     * be recovered by another process.
     */
    runLeaseMs: number;
    /** `WARRANT_MAX_ACTIVE_RUNS`: runs one principal may have going at once (across threads); more → 429. */
    maxActiveRuns: number;
    /**
     * `WARRANT_DEV_LOGIN`: `1` serves the dev sign-in (`/dev/token`) on any address, `0` never;
     * unset serves it only on a loopback HOST with the shipped dev directory.
     */
    devLogin: boolean | undefined;
    /** `WARRANT_CORS_ORIGINS`: browser origins allowed to call the API (e.g. an agent-chat-ui on another port); none by default. */
    corsOrigins: string[];
    /**
     * `WARRANT_TEST_CRASH_AT` (tests only): the process SIGKILLs itself at this
     * point of a run's start or end (the crash-point tests); unset in any deployment.
     */
    testCrashAt:
      | "after_lease"
      | "after_run_row"
      | "after_first_event"
      | "after_final_checkpoint"
      | "after_run_end"
      | undefined;
  };
  /** Crons and webhooks (README "Crons", "Webhooks"). */
  platform?: {
    /** `WARRANT_CRON_INTERVAL_MS`: how often each instance looks for crons due (default 5 s). */
    cronIntervalMs: number;
    /** `WARRANT_QUEUE_POLL_MS`: how often each instance looks for delayed or queued runs due (default 500 ms). */
    queuePollMs: number;
    /** `WARRANT_TASK_POLL_MS`: how often each instance looks for MCP task waits due (default 1 s). */
    taskPollMs?: number | undefined;
    /** `WARRANT_MAX_CRONS`: crons one principal may have (default 10). */
    maxCrons: number;
    /** `WARRANT_WEBHOOK_SECRET`: the key webhook bodies are signed with; unset, webhooks are refused. */
    webhookSecret: string | undefined;
    /** `WARRANT_WEBHOOK_POLL_MS`: how often each instance looks for webhook deliveries due (default 1 s). */
    webhookPollMs: number;
    /** `WARRANT_TEST_CRON_CLAIM_DELAY_MS` (tests only): a pause between reading a due cron and claiming it. */
    testCronClaimDelayMs: number | undefined;
  };
}

/** Reads and validates the environment. Throws a `ConfigError` naming the variable. */
export function loadSettings(source: Record<string, string | undefined> = process.env): Settings {
  // An empty variable (e.g. copied from .env.example) means "not set".
  const present = Object.fromEntries(
    Object.entries(source).filter(([, value]) => value !== undefined && value.trim() !== ""),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = issue?.path.join(".") ?? "environment";
    throw new ConfigError("config_invalid", `${variable} ${issue?.message ?? "is invalid"}`);
  }
  const env = parsed.data;
  if (env.WARRANT_MODEL !== undefined) {
    const named = parseModelName(env.WARRANT_MODEL);
    if (
      named.provider === "openai-compatible" &&
      env.WARRANT_MODEL.startsWith("openai-compatible:") &&
      !env.OPENAI_BASE_URL
    )
      throw new ConfigError(
        "config_invalid",
        "WARRANT_MODEL names an openai-compatible: model but OPENAI_BASE_URL is not set",
      );
  }
  // Every worker needs at least one connection of its own, and the workers' pools together stay within the maximum.
  if (env.WARRANT_WORKERS !== undefined && env.WARRANT_WORKERS > env.WARRANT_PG_POOL_MAX)
    throw new ConfigError(
      "config_invalid",
      `WARRANT_WORKERS (${env.WARRANT_WORKERS}) must not exceed WARRANT_PG_POOL_MAX (${env.WARRANT_PG_POOL_MAX}): ` +
        "each worker needs a connection of its own",
    );
  const fromRoot = (value: string | undefined, fallback: string) => path.resolve(REPO_ROOT, value ?? fallback);
  return {
    databaseUrl: env.DATABASE_URL,
    workers: env.WARRANT_WORKERS ?? Math.min(os.availableParallelism(), DEFAULT_WORKERS_CAP, env.WARRANT_PG_POOL_MAX),
    pool: {
      max: env.WARRANT_PG_POOL_MAX,
      backgroundMax: env.WARRANT_PG_BACKGROUND_POOL_MAX,
      waitMs: env.WARRANT_PG_POOL_WAIT_MS,
      queryTimeoutMs: env.WARRANT_PG_QUERY_TIMEOUT_MS,
    },
    dataDir: fromRoot(env.WARRANT_DATA_DIR, ".data"),
    configPath: fromRoot(env.WARRANT_CONFIG, "warrant.config.json"),
    principalsPath: fromRoot(env.WARRANT_PRINCIPALS, "src/domains/dev-principals.json"),
    verifiedClaimsOnly: env.WARRANT_VERIFIED_CLAIMS_ONLY === "1",
    // The rules planner is the default whenever no model is configured.
    planner: env.WARRANT_PLANNER ?? (env.WARRANT_MODEL ? "model" : "rules"),
    model: {
      name: env.WARRANT_MODEL ?? "gpt-4o-mini",
      baseUrl: env.OPENAI_BASE_URL,
      apiKey: env.OPENAI_API_KEY,
      anthropicBaseUrl: env.ANTHROPIC_BASE_URL,
      anthropicApiKey: env.ANTHROPIC_API_KEY,
      googleBaseUrl: env.GOOGLE_GENAI_BASE_URL,
      googleApiKey: env.GOOGLE_API_KEY,
    },
    budgets: {
      model_turns: env.WARRANT_MAX_MODEL_TURNS,
      tool_calls: env.WARRANT_MAX_TOOL_CALLS,
      deadline_ms: env.WARRANT_DEADLINE_MS,
      tokens: env.WARRANT_MAX_TOKENS,
      cost_usd: env.WARRANT_MAX_COST_USD,
      max_repeats: env.WARRANT_MAX_REPEATS,
      no_progress_steps: env.WARRANT_NO_PROGRESS_STEPS,
    },
    server: {
      authSecret: env.WARRANT_AUTH_SECRET,
      token: env.WARRANT_TOKEN,
      metricsToken: env.WARRANT_METRICS_TOKEN,
      port: env.PORT ?? 2024,
      host: env.HOST ?? "127.0.0.1",
      maxBodyBytes: env.WARRANT_MAX_BODY_BYTES,
      runLeaseMs: env.WARRANT_RUN_LEASE_MS,
      maxActiveRuns: env.WARRANT_MAX_ACTIVE_RUNS,
      corsOrigins: env.WARRANT_CORS_ORIGINS,
      testCrashAt: env.WARRANT_TEST_CRASH_AT,
      devLogin: env.WARRANT_DEV_LOGIN === undefined ? undefined : env.WARRANT_DEV_LOGIN === "1",
    },
    platform: {
      cronIntervalMs: env.WARRANT_CRON_INTERVAL_MS,
      queuePollMs: env.WARRANT_QUEUE_POLL_MS,
      taskPollMs: env.WARRANT_TASK_POLL_MS,
      maxCrons: env.WARRANT_MAX_CRONS,
      webhookSecret: env.WARRANT_WEBHOOK_SECRET,
      webhookPollMs: env.WARRANT_WEBHOOK_POLL_MS,
      testCronClaimDelayMs: env.WARRANT_TEST_CRON_CLAIM_DELAY_MS,
    },
  };
}

/**
 * The environment for child processes we spawn (MCP servers): the parent's
 * variables minus secrets that a tool server has no business seeing.
 */
export function childEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(OPENAI_|WARRANT_AUTH_SECRET|WARRANT_WEBHOOK_SECRET|WARRANT_METRICS_TOKEN|DATABASE_URL)/.test(key)) continue;
    result[key] = value;
  }
  return { ...result, ...extra };
}

/**
 * The values of the environment variables named by the servers' OAuth
 * credentials (`client_secret: "${NAME}"`, src/oauth/config.ts): the
 * one way a client secret or key reaches the host.
 */
export function credentialValues(
  names: readonly string[],
  source: Record<string, string | undefined> = process.env,
): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, source[name]]));
}
