/**
 * `warrant.config.json`: the MCP servers the host connects to and a contract
 * for every tool the agent may see. A tool without a contract stays hidden.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ConfigError } from "../errors.js";
import { RISKS } from "../runtime/ledger.js";

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

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
      .object({ command: z.string().min(1), args: z.array(z.string()).default([]), env: z.record(z.string(), z.string()).default({}) })
      .strict()
      .optional(),
  })
  .strict()
  .refine((server) => server.url !== undefined || server.launch !== undefined, { message: "needs a url or a launch command" });

export const ServerConfigSchema = z.discriminatedUnion("transport", [StdioServerSchema, HttpServerSchema]);
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

/** Where a host-injected argument's value comes from. */
export const INJECTION_SOURCES = ["principal.user_id", "principal.tenant", "run.thread_id", "action.idempotency_key"] as const;

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
    run_bound: z.array(z.string().min(1)).default([]),
    injected: z.record(z.string().min(1), z.enum(INJECTION_SOURCES)).default({}),
    /** Resource check before any existence check: the value of `argument` must map into the principal's `principal_field`. */
    resource: z
      .object({
        argument: z.string().min(1),
        /** Regex with one capture group that extracts the resource's owner key (e.g. the course) from the argument. */
        pattern: z.string().min(1),
        principal_field: z.enum(["courses", "tenant"]),
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
    /**
     * For a write: the read tool that says whether an idempotency key was
     * applied. A write whose outcome is unknown (timeout, lost response, crash)
     * is reconciled through it instead of being re-run blindly (DESIGN §6, §9).
     */
    reconcile: ReconcileSchema.optional(),
  })
  .strict();
export type ToolContract = z.infer<typeof ToolContractSchema>;

/** USD per million tokens; no model costs more than 10 000, so a larger number is a typo. */
const usdPerMillion = z.number().finite().min(0).max(10_000);
export const ModelPriceSchema = z.object({ input_per_million_usd: usdPerMillion, output_per_million_usd: usdPerMillion }).strict();

export const WarrantConfigSchema = z
  .object({
    servers: z.record(z.string().regex(NAME), ServerConfigSchema),
    tools: z.record(z.string().regex(NAME), ToolContractSchema),
    selection: z
      .object({ max_tools: z.number().int().min(1).max(128).default(8) })
      .strict()
      .default({ max_tools: 8 }),
    /** Prices of the models a model planner may use (USD per million tokens); unlisted models cost 0. */
    models: z.record(z.string().min(1).max(128), ModelPriceSchema).default({}),
  })
  .strict()
  .superRefine((config, context) => {
    for (const [tool, contract] of Object.entries(config.tools)) {
      if (!Object.hasOwn(config.servers, contract.server)) {
        context.addIssue({ code: "custom", path: ["tools", tool, "server"], message: `names unknown server "${contract.server}"` });
      }
      if (contract.reconcile) checkReconcile(config.tools, tool, contract, context);
      if (contract.resource) {
        try {
          new RegExp(contract.resource.pattern);
        } catch {
          context.addIssue({ code: "custom", path: ["tools", tool, "resource", "pattern"], message: "is not a valid regular expression" });
        }
      }
    }
  });
export type WarrantConfig = z.infer<typeof WarrantConfigSchema>;

/** A reconcile rule must name a read tool on the write's server, and the write must carry a host-made idempotency key. */
function checkReconcile(tools: Record<string, ToolContract>, name: string, contract: ToolContract, context: z.RefinementCtx): void {
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
    throw new ConfigError("config_invalid", `${source}: not valid JSON (${(error as Error).message})`);
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
    throw new ConfigError("config_invalid", `cannot read ${filePath}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  if (Buffer.byteLength(text) > 1024 * 1024) throw new ConfigError("config_invalid", `${filePath}: larger than 1 MiB`);
  return parseConfig(text, filePath);
}
