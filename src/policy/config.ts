/**
 * `warrant.config.json`: the MCP servers the host connects to and a contract
 * for every tool the agent may see. A tool without a contract stays hidden.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ConfigError } from "../errors.js";
import { NAME, ToolContractSchema, type ToolContract } from "./contracts.js";
import { ENGINE_NAMES } from "./engine-errors.js";
import { jsonSyntaxError } from "./json-syntax.js";
import { AuthConfigSchema } from "../auth/oidc-config.js";
import { OAuthConfigSchema } from "../oauth/config.js";
import { compilePatterns } from "../secrets/scanner.js";
import { WebhooksConfigSchema } from "./webhook-config.js";

/** Reconnect backoff for a server that failed or crashed: exponential from `base_ms`, capped at `max_ms`, with jitter. */
export const ReconnectSchema = z
  .object({
    base_ms: z.number().int().min(10).max(60_000).default(200),
    max_ms: z.number().int().min(10).max(600_000).default(10_000),
  })
  .strict()
  .refine((policy) => policy.max_ms >= policy.base_ms, { message: "max_ms must be at least base_ms" })
  .default({ base_ms: 200, max_ms: 10_000 });

/** Settings every server has, whatever its transport. */
const serverCommon = {
  /** An optional server that fails at start-up starts unhealthy and is retried; a required one stops start-up. */
  optional: z.boolean().default(false),
  reconnect: ReconnectSchema,
  /** The server may ask the run's owner for input during a call (`elicitation/create`); otherwise such requests are declined. */
  elicitation: z.boolean().optional(),
  /**
   * The MCP revision to speak: `2026-07-28` (the v2 SDK) or
   * `2025-11-25`; without it the host asks `server/discover` and falls back to 2025-11-25 when the server does not
   * speak 2026-07-28.
   */
  protocol: z.enum(["2026-07-28", "2025-11-25"]).optional(),
};

const StdioServerSchema = z
  .object({
    transport: z.literal("stdio"),
    ...serverCommon,
    /** `node` means this very Node binary (process.execPath). */
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
  })
  .strict();

const HttpServerSchema = z
  .object({
    transport: z.literal("http"),
    ...serverCommon,
    /** The server's MCP endpoint; omit it when `launch` starts the server (it announces its URL). */
    url: z.string().url().optional(),
    /** Audience of the task tokens minted for this server. */
    audience: z.string().min(1).max(64),
    /** Start the server as a child process that prints `… listening on <url>` on stdout. */
    launch: z
      .object({
        command: z.string().min(1),
        args: z.array(z.string()).default([]),
        env: z.record(z.string(), z.string()).default({}),
      })
      .strict()
      .optional(),
    /** OAuth 2.1 towards a remote server (src/oauth/config.ts); without it, Warrant's task tokens. */
    auth: OAuthConfigSchema.optional(),
  })
  .strict()
  .refine((server) => server.url !== undefined || server.launch !== undefined, {
    message: "needs a url or a launch command",
  })
  .refine((server) => server.auth === undefined || (server.url !== undefined && server.launch === undefined), {
    message: "an OAuth-protected server is a remote one: give its url, not a launch command",
  });

export const ServerConfigSchema = z.discriminatedUnion("transport", [StdioServerSchema, HttpServerSchema]);
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

/**
 * Who decides a tool call of each risk: `none` (no review), `owner_or_reviewer`
 * (the run's owner or a reviewer of the owner's tenant), `reviewer_not_owner`
 * (four eyes: a reviewer of the tenant other than the owner).
 */
export const REVIEW_RULES = ["none", "owner_or_reviewer", "reviewer_not_owner"] as const;
export const ReviewPolicySchema = z
  .object({
    read: z.enum(REVIEW_RULES).default("none"),
    write_reversible: z.enum(REVIEW_RULES).default("owner_or_reviewer"),
    write_irreversible: z.enum(REVIEW_RULES).default("reviewer_not_owner"),
  })
  .strict()
  .refine((policy) => policy.write_reversible !== "none" && policy.write_irreversible !== "none", {
    message: "writes always need a review",
  })
  .default({ read: "none", write_reversible: "owner_or_reviewer", write_irreversible: "reviewer_not_owner" });
export type ReviewPolicy = z.infer<typeof ReviewPolicySchema>;

/** USD per million tokens; no model costs more than 10 000, so a larger number is a typo. */
const usdPerMillion = z.number().finite().min(0).max(10_000);
const tokens = z.number().int().min(1_024).max(10_000_000);
/** A model's window when the config does not say: what current hosted models offer. */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 128_000;
/** A model's price and how a model planner talks to it. */
export const ModelPriceSchema = z
  .object({
    input_per_million_usd: usdPerMillion,
    output_per_million_usd: usdPerMillion,
    /** USD per million input tokens read from the provider's prompt cache (default: the input price). */
    cached_input_per_million_usd: usdPerMillion.optional(),
    /** USD per million input tokens written to the prompt cache (Anthropic: 1.25x input; default: the input price). */
    cache_write_per_million_usd: usdPerMillion.optional(),
    /**
     * How requests ask for prompt caching (default by provider: `anthropic:` breakpoints, `openai:`
     * prompt_cache_key, otherwise automatic): `breakpoints` sets Anthropic `cache_control` markers,
     * `prompt_cache_key` sends OpenAI's per-thread key, `automatic` sends nothing and relies on the server.
     */
    caching: z.enum(["breakpoints", "prompt_cache_key", "automatic"]).optional(),
    /**
     * How a step's restriction of the tools block reaches the model: `allowed_tools` (OpenAI's
     * `tool_choice`) or an appended `note` (default; the only way on Anthropic). `authorize` enforces it either way.
     */
    tool_restriction: z.enum(["allowed_tools", "note"]).optional(),
    /** Older spelling of `tool_restriction: "allowed_tools"` (true) or `"note"` (false). */
    allowed_tools: z.boolean().optional(),
    /** The model's context window in tokens (default 128,000); the compaction budget defaults to half of it. */
    context_window_tokens: tokens.optional(),
    /** Transcript tokens past which old tool results are compacted (planners/context.ts); at most the window. */
    compact_at_tokens: tokens.optional(),
  })
  .strict()
  .refine(
    (model) =>
      model.allowed_tools === undefined ||
      model.tool_restriction === undefined ||
      model.allowed_tools === (model.tool_restriction === "allowed_tools"),
    { message: "allowed_tools contradicts tool_restriction", path: ["tool_restriction"] },
  )
  .refine(
    (model) =>
      model.compact_at_tokens === undefined ||
      model.compact_at_tokens <= (model.context_window_tokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS),
    {
      message: "compact_at_tokens must not exceed context_window_tokens",
      path: ["compact_at_tokens"],
    },
  );
export type ModelSettings = z.infer<typeof ModelPriceSchema>;

/**
 * The engine behind the `authorized` check: `builtin` (the contracts' scopes
 * and resource rules) or `cedar` (policy files type-checked against a schema
 * file; paths relative to the config file).
 */
export const PolicyEngineConfigSchema = z
  .object({
    engine: z.enum(ENGINE_NAMES).default("builtin"),
    cedar: z
      .object({
        schema: z.string().min(1).max(500),
        policies: z.array(z.string().min(1).max(500)).min(1).max(64),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((policy) => policy.engine !== "cedar" || policy.cedar !== undefined, {
    message: "engine cedar needs cedar.schema and cedar.policies",
    path: ["cedar"],
  })
  .default({ engine: "builtin" });
export type PolicyEngineConfig = z.infer<typeof PolicyEngineConfigSchema>;

export const WarrantConfigSchema = z
  .object({
    servers: z
      .record(z.string().regex(NAME), ServerConfigSchema)
      .describe("The MCP servers, by name: a stdio command or an HTTP URL."),
    tools: z
      .record(z.string().regex(NAME), ToolContractSchema)
      .describe("Tool contracts, by tool name: a tool no contract names is never offered."),
    review_policy: ReviewPolicySchema.describe("Who may decide a review, per risk (DESIGN §8)."),
    policy: PolicyEngineConfigSchema.describe("Which engine decides the `authorized` check: builtin or cedar."),
    selection: z
      .object({ max_tools: z.number().int().min(1).max(128).default(8) })
      .strict()
      .default({ max_tools: 8 })
      .describe("How many tools a step offers at most, the most relevant first."),
    models: z
      .record(z.string().min(1).max(128), ModelPriceSchema)
      .default({})
      .describe("Prices of the models a model planner may use (USD per million tokens); unlisted models cost 0."),
    elicitation: z
      .object({ timeout_ms: z.number().int().min(1_000).max(3_600_000).default(120_000) })
      .strict()
      .default({ timeout_ms: 120_000 })
      .describe("How long a server's question (elicitation) waits for the run's owner before it is declined."),
    /**
     * Secret shapes to redact besides the built-in ones (src/secrets/scanner.ts), by kind:
     * `{"internal_token": "\\bint_[A-Za-z0-9]{24,}"}`.
     */
    secrets: z
      .object({ patterns: z.record(z.string(), z.string().min(1).max(500)).default({}) })
      .strict()
      .default({ patterns: {} })
      .describe("Secret shapes to redact besides the built-in ones, by kind (regular expressions)."),
    webhooks: WebhooksConfigSchema.describe("Where run webhooks may be sent and how they are retried."),
    auth: AuthConfigSchema.describe(
      "Sign-in from the organization's OpenID Connect provider; absent: dev tokens only.",
    ),
  })
  .strict()
  .superRefine((config, context) => {
    for (const [kind, pattern] of Object.entries(config.secrets.patterns)) {
      try {
        compilePatterns({ [kind]: pattern });
      } catch (error) {
        context.addIssue({ code: "custom", path: ["secrets", "patterns", kind], message: (error as Error).message });
      }
    }
    for (const [tool, contract] of Object.entries(config.tools)) {
      if (!Object.hasOwn(config.servers, contract.server)) {
        context.addIssue({
          code: "custom",
          path: ["tools", tool, "server"],
          message: `names unknown server "${contract.server}"`,
        });
      }
      if (contract.reconcile) checkReconcile(config.tools, tool, contract, context);
      if (contract.task && contract.risk === "read")
        context.addIssue({ code: "custom", path: ["tools", tool, "task"], message: "is only for write tools" });
      if (contract.resource) {
        try {
          new RegExp(contract.resource.pattern);
        } catch {
          context.addIssue({
            code: "custom",
            path: ["tools", tool, "resource", "pattern"],
            message: "is not a valid regular expression",
          });
        }
      }
    }
  });
export type WarrantConfig = z.infer<typeof WarrantConfigSchema>;

/** A reconcile rule must name a read tool on the write's server, and the write must carry a host-made idempotency key. */
function checkReconcile(
  tools: Record<string, ToolContract>,
  name: string,
  contract: ToolContract,
  context: z.RefinementCtx,
): void {
  const rule = contract.reconcile;
  if (!rule) return;
  const path = ["tools", name, "reconcile"];
  if (contract.risk === "read") context.addIssue({ code: "custom", path, message: "is only for write tools" });
  if (!Object.values(contract.injected).includes("action.idempotency_key")) {
    context.addIssue({ code: "custom", path, message: "needs an argument injected from action.idempotency_key" });
  }
  const status = Object.hasOwn(tools, rule.tool) ? tools[rule.tool] : undefined;
  if (!status) {
    context.addIssue({ code: "custom", path: [...path, "tool"], message: `names unknown tool "${rule.tool}"` });
  } else if (status.risk !== "read" || status.server !== contract.server) {
    context.addIssue({ code: "custom", path: [...path, "tool"], message: "must be a read tool on the same server" });
  }
}

/** Parses config text; every problem becomes one `ConfigError` line naming the path. */
export function parseConfig(text: string, source = "warrant.config.json"): WarrantConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const where = jsonSyntaxError(text);
    throw new ConfigError(
      "config_invalid",
      where ? `${source}: not valid JSON at ${where}` : `${source}: not valid JSON (${(error as Error).message})`,
    );
  }
  const parsed = WarrantConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "(root)";
    throw new ConfigError("config_invalid", `${source}: ${where} ${issue?.message ?? "is invalid"}`);
  }
  return parsed.data;
}

/** Reads and validates the config file. Files over 1 MiB are refused. */
export async function loadConfig(filePath: string): Promise<WarrantConfig> {
  let text: string;
  try {
    text = await readFile(filePath, "utf8");
  } catch (error) {
    throw new ConfigError(
      "config_invalid",
      `cannot read ${filePath}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  if (Buffer.byteLength(text) > 1024 * 1024) throw new ConfigError("config_invalid", `${filePath}: larger than 1 MiB`);
  return parseConfig(text, filePath);
}
