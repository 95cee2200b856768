/**
 * Error classes and guards (src/errors.ts) and environment settings
 * (src/env.ts), given a record instead of process.env.
 */
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REPO_ROOT, childEnvironment, loadSettings } from "../../src/env.js";
import {
  ConfigError,
  InvariantError,
  ModelBehaviorError,
  TOOL_ERROR_CODES,
  WarrantError,
  describeError,
  errorClassOf,
  isConfigError,
  isInvariantError,
  isModelBehaviorError,
  isToolErrorCode,
} from "../../src/errors.js";

describe("error classes", () => {
  it("name each instance after its class and keep code, message and cause", () => {
    const cause = new Error("root");
    const error = new ConfigError("config_invalid", "bad", { cause });
    expect(error).toBeInstanceOf(WarrantError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ConfigError");
    expect(error.code).toBe("config_invalid");
    expect(error.message).toBe("bad");
    expect(error.cause).toBe(cause);
    expect(new ModelBehaviorError("model_empty_reply", "x").name).toBe("ModelBehaviorError");
    expect(new InvariantError("illegal_transition", "x").name).toBe("InvariantError");
  });

  it("name a subclass after itself", () => {
    class CustomConfigError extends ConfigError {}
    expect(new CustomConfigError("config_invalid", "x").name).toBe("CustomConfigError");
  });
});

describe("guards by name", () => {
  const guards = [
    ["ConfigError", isConfigError, new ConfigError("config_invalid", "x")],
    ["ModelBehaviorError", isModelBehaviorError, new ModelBehaviorError("model_empty_reply", "x")],
    ["InvariantError", isInvariantError, new InvariantError("illegal_transition", "x")],
  ] as const;

  it.each(guards)(
    "%s guard accepts its instances and plain objects with that name (another package copy)",
    (name, guard, instance) => {
      expect(guard(instance)).toBe(true);
      expect(guard({ name, code: "whatever", message: "from another copy" })).toBe(true);
    },
  );

  it.each(guards)("%s guard rejects the other classes and non-errors", (name, guard) => {
    for (const [otherName, , other] of guards) {
      if (otherName !== name) expect(guard(other)).toBe(false);
    }
    for (const value of [
      null,
      undefined,
      name,
      0,
      new Error("x"),
      { name: name.toLowerCase() },
      { code: "config_invalid" },
    ]) {
      expect(guard(value)).toBe(false);
    }
  });
});

describe("errorClassOf and isToolErrorCode", () => {
  it("classifies every code as DESIGN §6 says", () => {
    const table = Object.fromEntries(TOOL_ERROR_CODES.map((code) => [code, errorClassOf(code)]));
    expect(table).toEqual({
      unknown_tool: "contract",
      invalid_arguments: "contract",
      tool_not_permitted: "contract",
      access_denied: "authorization",
      approval_required: "authorization",
      approval_rejected: "authorization",
      approval_expired: "authorization",
      authorization_required: "authorization",
      not_found: "business",
      capacity_exceeded: "business",
      tool_failed: "business",
      task_cancelled: "business",
      tool_timeout: "transient",
      transient_error: "transient",
      protocol_error: "protocol",
      server_unavailable: "protocol",
      outcome_unknown: "unknown_effect",
      budget_exhausted: "control",
      repeated_action: "control",
    });
  });

  it("recognizes only our codes", () => {
    expect(isToolErrorCode("access_denied")).toBe(true);
    for (const value of ["ACCESS_DENIED", "config_invalid", "", 1, null, undefined, ["not_found"]])
      expect(isToolErrorCode(value)).toBe(false);
  });
});

describe("describeError", () => {
  it("prints code and message for coded errors, name and message otherwise", () => {
    expect(describeError(new ConfigError("config_invalid", "DATABASE_URL has no host"))).toBe(
      "config_invalid: DATABASE_URL has no host",
    );
    expect(describeError(new TypeError("boom"))).toBe("TypeError: boom");
    expect(describeError("plain")).toBe("plain");
  });
});

/** Calls loadSettings and returns the ConfigError it throws. */
function configErrorOf(record: Record<string, string | undefined>): ConfigError {
  try {
    loadSettings(record);
  } catch (error) {
    expect(isConfigError(error)).toBe(true);
    expect((error as ConfigError).code).toBe("config_invalid");
    return error as ConfigError;
  }
  throw new Error(`expected ${JSON.stringify(record)} to be refused`);
}

describe("loadSettings", () => {
  it("defaults everything from an empty record", () => {
    expect(loadSettings({})).toEqual({
      databaseUrl: undefined,
      // One worker per core, at most 8 and at most the pool's 10 connections.
      workers: Math.min(os.availableParallelism(), 8, 10),
      pool: { max: 10, backgroundMax: 2, waitMs: 5_000, queryTimeoutMs: 30_000 },
      platform: {
        cronIntervalMs: 5_000,
        queuePollMs: 500,
        taskPollMs: 1000,
        maxCrons: 10,
        webhookSecret: undefined,
        webhookPollMs: 1_000,
        testCronClaimDelayMs: undefined,
      },
      dataDir: path.resolve(REPO_ROOT, ".data"),
      configPath: path.resolve(REPO_ROOT, "warrant.config.json"),
      principalsPath: path.resolve(REPO_ROOT, "src/domains/dev-principals.json"),
      verifiedClaimsOnly: false,
      planner: "rules",
      model: { name: "gpt-4o-mini", baseUrl: undefined, apiKey: undefined },
      budgets: {
        model_turns: 8,
        tool_calls: 12,
        deadline_ms: 120_000,
        tokens: 200_000,
        cost_usd: 1,
        max_repeats: 2,
        no_progress_steps: 3,
      },
      server: {
        authSecret: undefined,
        port: 2024,
        host: "127.0.0.1",
        maxBodyBytes: 1_048_576,
        runLeaseMs: 30_000,
        maxActiveRuns: 4,
        corsOrigins: [],
      },
    });
  });

  it("refuses a webhook secret shorter than 32 characters, naming the variable", () => {
    expect(() => loadSettings({ WARRANT_WEBHOOK_SECRET: "short" })).toThrow(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining("WARRANT_WEBHOOK_SECRET") }),
    );
    expect(loadSettings({ WARRANT_WEBHOOK_SECRET: "s".repeat(32) }).platform?.webhookSecret).toBe("s".repeat(32));
  });

  it("takes a metrics scraper token of 32 to 512 printable characters, and refuses anything else by name", () => {
    expect(loadSettings({}).server.metricsToken).toBeUndefined();
    expect(loadSettings({ WARRANT_METRICS_TOKEN: "m".repeat(32) }).server.metricsToken).toBe("m".repeat(32));
    for (const bad of [
      "short",
      "m".repeat(513),
      `${"m".repeat(31)} m`,
      `${"m".repeat(32)}\n`,
      `${"m".repeat(32)}\u00e9`,
    ])
      expect(() => loadSettings({ WARRANT_METRICS_TOKEN: bad })).toThrow(
        expect.objectContaining({ code: "config_invalid", message: expect.stringContaining("WARRANT_METRICS_TOKEN") }),
      );
  });

  it("reads the pool bounds and rejects a pool of zero connections", () => {
    expect(
      loadSettings({ WARRANT_PG_POOL_MAX: "3", WARRANT_PG_POOL_WAIT_MS: "250", WARRANT_PG_QUERY_TIMEOUT_MS: "1500" })
        .pool,
    ).toEqual({
      max: 3,
      backgroundMax: 2,
      waitMs: 250,
      queryTimeoutMs: 1500,
    });
    expect(() => loadSettings({ WARRANT_PG_QUERY_TIMEOUT_MS: "-1" })).toThrow(
      expect.objectContaining({
        code: "config_invalid",
        message: expect.stringContaining("WARRANT_PG_QUERY_TIMEOUT_MS"),
      }),
    );
    expect(() => loadSettings({ WARRANT_PG_POOL_MAX: "0" })).toThrow(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining("WARRANT_PG_POOL_MAX") }),
    );
  });

  it("reads the serving settings and rejects bad ones with the variable's name", () => {
    const settings = loadSettings({
      PORT: "0",
      HOST: "0.0.0.0",
      WARRANT_MAX_BODY_BYTES: "2048",
      WARRANT_RUN_LEASE_MS: "500",
      WARRANT_AUTH_SECRET: "ab".repeat(32),
      WARRANT_CORS_ORIGINS: "http://localhost:3000, https://chat.example.com",
    });
    expect(settings.server).toEqual({
      authSecret: "ab".repeat(32),
      port: 0,
      host: "0.0.0.0",
      maxBodyBytes: 2048,
      runLeaseMs: 500,
      maxActiveRuns: 4,
      corsOrigins: ["http://localhost:3000", "https://chat.example.com"],
    });
    for (const [name, value] of [
      ["PORT", "http"],
      ["PORT", "70000"],
      ["PORT", "-1"],
      ["WARRANT_MAX_BODY_BYTES", "0"],
      ["WARRANT_MAX_BODY_BYTES", "1e6"],
      ["WARRANT_RUN_LEASE_MS", "soon"],
      ["WARRANT_MAX_ACTIVE_RUNS", "0"],
      ["WARRANT_CORS_ORIGINS", "*"],
      ["WARRANT_CORS_ORIGINS", "http://localhost:3000/path"],
      ["WARRANT_CORS_ORIGINS", "javascript:alert(1)"],
      ["WARRANT_DEV_LOGIN", "true"],
      ["WARRANT_VERIFIED_CLAIMS_ONLY", "yes"],
    ] as const) {
      expect(() => loadSettings({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`^${name} `));
    }
  });

  it("reads budgets as positive integers", () => {
    const settings = loadSettings({
      WARRANT_MAX_MODEL_TURNS: "3",
      WARRANT_MAX_TOOL_CALLS: "4",
      WARRANT_DEADLINE_MS: "5000",
      WARRANT_MAX_TOKENS: "6000",
      WARRANT_MAX_REPEATS: "1",
      WARRANT_NO_PROGRESS_STEPS: "7",
      WARRANT_MAX_COST_USD: "0.25",
    });
    expect(settings.budgets).toEqual({
      model_turns: 3,
      tool_calls: 4,
      deadline_ms: 5000,
      tokens: 6000,
      cost_usd: 0.25,
      max_repeats: 1,
      no_progress_steps: 7,
    });
  });

  it.each(["0", "0.0", "-1", "1e3", "$1", "one", "1."])("refuses WARRANT_MAX_COST_USD=%s", (value) => {
    expect(configErrorOf({ WARRANT_MAX_COST_USD: value }).message).toMatch(/^WARRANT_MAX_COST_USD /);
  });

  it("resolves relative paths from the repository root and keeps absolute ones", () => {
    const settings = loadSettings({ WARRANT_DATA_DIR: "tmp/data", WARRANT_CONFIG: "/etc/warrant.json" });
    expect(settings.dataDir).toBe(path.join(REPO_ROOT, "tmp", "data"));
    expect(settings.configPath).toBe("/etc/warrant.json");
  });

  it("chooses the model planner by default when WARRANT_MODEL is set", () => {
    const settings = loadSettings({
      WARRANT_MODEL: "gpt-4.1-mini",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    });
    expect(settings.planner).toBe("model");
    expect(settings.model).toEqual({ name: "gpt-4.1-mini", baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-test" });
  });

  it("lets an explicit WARRANT_PLANNER win over the default", () => {
    expect(loadSettings({ WARRANT_MODEL: "gpt-4.1-mini", WARRANT_PLANNER: "rules" }).planner).toBe("rules");
    expect(loadSettings({ WARRANT_PLANNER: "model" }).planner).toBe("model");
  });

  it("refuses an unknown planner", () => {
    expect(configErrorOf({ WARRANT_PLANNER: "gpt" }).message).toContain("WARRANT_PLANNER");
  });

  it("accepts postgres:// and postgresql:// URLs, trimmed, and treats blank as unset", () => {
    expect(loadSettings({ DATABASE_URL: " postgres://warrant@db:5432/warrant " }).databaseUrl).toBe(
      "postgres://warrant@db:5432/warrant",
    );
    expect(loadSettings({ DATABASE_URL: "postgresql://db/warrant" }).databaseUrl).toBe("postgresql://db/warrant");
    expect(loadSettings({ DATABASE_URL: "   " }).databaseUrl).toBeUndefined();
  });

  it.each(["not a url", "mysql://x", "postgres://"])(
    "refuses DATABASE_URL %j with config_invalid naming the variable",
    (value) => {
      const error = configErrorOf({ DATABASE_URL: value });
      expect(error.message.startsWith("DATABASE_URL ")).toBe(true);
    },
  );

  it("does not echo the database URL (it may hold a password)", () => {
    const error = configErrorOf({ DATABASE_URL: "mysql://user:s3cret@host/db" });
    expect(error.message).not.toContain("s3cret");
  });

  it("treats an empty variable as unset (a copied .env.example)", () => {
    expect(loadSettings({ WARRANT_MAX_TOOL_CALLS: "", WARRANT_PLANNER: " ", DATABASE_URL: "" })).toMatchObject({
      budgets: { tool_calls: 12 },
      planner: "rules",
      databaseUrl: undefined,
    });
  });

  it.each(["abc", "0", "-1", "1.5", " 3", "1e3", "99999999999999999999"])(
    "refuses budget %j with config_invalid naming the variable",
    (value) => {
      const error = configErrorOf({ WARRANT_MAX_TOOL_CALLS: value });
      expect(error.message).toContain("WARRANT_MAX_TOOL_CALLS");
    },
  );

  it.each([
    "WARRANT_MAX_MODEL_TURNS",
    "WARRANT_DEADLINE_MS",
    "WARRANT_MAX_REPEATS",
    "WARRANT_NO_PROGRESS_STEPS",
    "WARRANT_MAX_TOKENS",
  ])("refuses a zero %s", (variable) => {
    expect(configErrorOf({ [variable]: "0" }).message).toContain(variable);
  });

  it("refuses a malformed OPENAI_BASE_URL", () => {
    expect(configErrorOf({ OPENAI_BASE_URL: "not a url" }).message).toContain("OPENAI_BASE_URL");
  });
});

describe("childEnvironment", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("drops OPENAI_*, DATABASE_URL and the auth secret and keeps the rest", () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-secret");
    vi.stubEnv("OPENAI_BASE_URL", "http://model.local");
    vi.stubEnv("DATABASE_URL", "postgres://user:pw@db/warrant");
    vi.stubEnv("WARRANT_AUTH_SECRET", "hmac");
    vi.stubEnv("WARRANT_WEBHOOK_SECRET", "w".repeat(32));
    vi.stubEnv("WARRANT_TEST_KEEP", "kept");
    const env = childEnvironment();
    expect(env).not.toHaveProperty("WARRANT_WEBHOOK_SECRET");
    expect(env).not.toHaveProperty("OPENAI_API_KEY");
    expect(env).not.toHaveProperty("OPENAI_BASE_URL");
    expect(env).not.toHaveProperty("DATABASE_URL");
    expect(env).not.toHaveProperty("WARRANT_AUTH_SECRET");
    expect(env["WARRANT_TEST_KEEP"]).toBe("kept");
    expect(Object.values(env)).not.toContain("sk-secret");
  });

  it("adds the extra variables on top", () => {
    vi.stubEnv("WARRANT_TEST_KEEP", "parent");
    const env = childEnvironment({ WARRANT_TEST_KEEP: "child", NOTES_DIR: "/data" });
    expect(env["WARRANT_TEST_KEEP"]).toBe("child");
    expect(env["NOTES_DIR"]).toBe("/data");
  });
});
