/**
 * Issue 40, end to end through `npm start` (the server process as the
 * README's run command starts it, `node --import tsx src/server/main.ts`),
 * with `policy.engine: "cedar"` in a config of its own, driven with
 * @langchain/langgraph-sdk and the scripted model (a fake OpenAI endpoint).
 * Three rules the JSON config cannot say: an argument-based limit (students
 * write only to their study calendar), a time window (07:00–23:00 in the
 * owner's zone), a team-scoped reviewer (the `approve` action), the last
 * refused at POST /reviews and at command.resume with the policy named; a
 * policy file changed while a review waited, applied at execute's re-check
 * (denied naming the policy, no calendar event); and an engine failure at
 * evaluation, refused with its typed code (fail closed).
 */
import { randomUUID } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintApiToken } from "../../src/auth/api-token.js";
import type { Principal } from "../../src/auth/principal.js";
import { cedarSchemaFor } from "../../src/policy/cedar-schema.js";
import { shippedCatalog, shippedConfig } from "../support/cedar-catalog.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

const A = "Warrant::Action";
const USAGE = { prompt_tokens: 10, completion_tokens: 5 };

/** An IANA zone (`Etc/GMT±N`) where it is now about `hour` o'clock. */
function zoneAt(hour: number): string {
  const offset = ((((hour - new Date().getUTCHours()) % 24) + 36) % 24) - 12;
  return offset === 0 ? "Etc/GMT" : offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
}

const student = (user_id: string, time_zone: string): Principal => ({
  user_id,
  tenant: "uni",
  role: "student",
  scopes: ["notes:read", "calendar:read", "calendar:write"],
  grants: { courses: ["cs301"], teams: ["x"] },
  time_zone,
});
const reviewer = (user_id: string, teams: string[]): Principal => ({
  user_id,
  tenant: "uni",
  role: "reviewer",
  scopes: ["notes:read", "approvals:decide"],
  grants: { courses: [], teams },
  time_zone: "UTC",
});
// alice's clock says midday, owl's 03:00 (hours far from the window's edges, so a slow test cannot cross one).
const PRINCIPALS = [
  student("alice", zoneAt(12)),
  student("owl", zoneAt(3)),
  reviewer("rita", ["x"]),
  reviewer("ryan", ["y"]),
];

const RULES = `
@id("study.calendar.write")
permit (principal, action == ${A}::"create_study_event", resource)
when { principal.scopes.contains("calendar:write") };

@id("study.schedule")
permit (principal, action == ${A}::"calculate_schedule", resource);

// An argument-based limit: students write only to their study calendar.
@id("calendar.own")
@code("access_denied")
forbid (principal in Warrant::Role::"student", action == ${A}::"create_study_event", resource)
when { context.args has calendar && context.args.calendar != "study" };

// A time window: students write between 07:00 and 23:00, their time.
@id("calendar.hours")
@code("access_denied")
forbid (principal in Warrant::Role::"student", action == ${A}::"create_study_event", resource)
when { context.time.hour < 7 || context.time.hour >= 23 };

// Who must approve: a reviewer of the owner's tenant and team, never the owner.
@id("review.team")
permit (principal, action == ${A}::"approve", resource)
when { principal.tenant == resource.tenant && principal.scopes.contains("approvals:decide") };

@id("review.not-own")
forbid (principal, action == ${A}::"approve", resource)
when { context.is_owner };

@id("review.other-team")
forbid (principal, action == ${A}::"approve", resource)
when { !principal.grants.teams.containsAny(resource.grants.teams) };
`;

const event = (calendar: string) => ({
  title: "Revise attention",
  start: "2026-12-02T18:00:00Z",
  end: "2026-12-02T19:00:00Z",
  timezone: "UTC",
  calendar,
});
const call = (name: string, args: Record<string, unknown>): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: [{ id: `call_${randomUUID().slice(0, 8)}`, name, arguments: JSON.stringify(args) }],
  finish_reason: "tool_calls",
  usage: USAGE,
});
const FINAL: ScriptedCompletion = {
  kind: "completion",
  content: JSON.stringify({ answer: "done", citations: [], abstained: false }),
  finish_reason: "stop",
  usage: USAGE,
};

interface Values {
  status: string;
  denials?: { check: string; stage: string; code: string; policies?: string[]; engine_error?: string }[];
  review_feedback?: { code: string; message: string; policies?: string[] } | null;
}

let sandbox: ServerSandbox;
let fake: FakeOpenAI;
let server: ServerProcess;
let rulesFile: string;
const clients = new Map<string, Client>();

async function tokenFor(user: string): Promise<string> {
  const principal = PRINCIPALS.find((entry) => entry.user_id === user);
  if (!principal) throw new Error(user);
  const secret = Uint8Array.from(Buffer.from(sandbox.env()["WARRANT_AUTH_SECRET"] ?? "", "hex"));
  return mintApiToken(secret, principal);
}
async function client(user: string): Promise<Client> {
  let found = clients.get(user);
  if (!found) {
    found = new Client({
      apiUrl: server.url,
      defaultHeaders: { Authorization: `Bearer ${await tokenFor(user)}` },
      callerOptions: { maxRetries: 0 },
    });
    clients.set(user, found);
  }
  return found;
}
async function ask(user: string, content: string): Promise<{ threadId: string; values: Values }> {
  const sdk = await client(user);
  const thread = await sdk.threads.create();
  const values = (await sdk.runs.wait(thread.thread_id, "agent", {
    input: { messages: [{ role: "user", content }] },
  })) as unknown as Values;
  return { threadId: thread.thread_id, values };
}
async function postReview(user: string, threadId: string): Promise<Response> {
  return fetch(`${server.url}/reviews/${threadId}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${await tokenFor(user)}`, "Content-Type": "application/json" },
    body: JSON.stringify({ decisions: [{ type: "approve" }] }),
  });
}

beforeAll(async () => {
  sandbox = await createServerSandbox();
  fake = await startFakeOpenAI();
  const dir = sandbox.dataDir;
  const shipped = shippedConfig();
  const tools = Object.fromEntries(Object.entries(shipped.tools).filter(([, tool]) => tool.server !== "caseops"));
  const { caseops: _caseops, ...servers } = shipped.servers;
  rulesFile = path.join(dir, "rules.cedar");
  await writeFile(rulesFile, RULES);
  await writeFile(path.join(dir, "warrant.cedarschema"), cedarSchemaFor(shippedCatalog(), ["teams"]));
  await writeFile(path.join(dir, "principals.json"), JSON.stringify({ principals: PRINCIPALS }));
  await writeFile(
    path.join(dir, "warrant.config.json"),
    JSON.stringify({
      ...shipped,
      servers,
      tools,
      policy: { engine: "cedar", cedar: { schema: "warrant.cedarschema", policies: ["rules.cedar"] } },
    }),
  );
  server = await sandbox.start({
    WARRANT_CONFIG: path.join(dir, "warrant.config.json"),
    WARRANT_PRINCIPALS: path.join(dir, "principals.json"),
    WARRANT_PLANNER: "model",
    WARRANT_MODEL: "fake-model",
    OPENAI_BASE_URL: fake.baseUrl,
  });
}, 240_000);

afterAll(async () => {
  await fake?.close();
  await sandbox?.cleanup();
  if (rulesFile) await rm(rulesFile, { force: true });
});

describe("Cedar rules through npm start", () => {
  it("an argument-based limit and a time window refuse at the proposal, naming the policy; nothing is written", async () => {
    fake.enqueue(call("create_study_event", event("work")), FINAL);
    const own = await ask("alice", "Put a revision session on attention in my calendar");
    expect(own.values.status).toBe("completed");
    expect(own.values.denials).toEqual([
      expect.objectContaining({
        check: "authorized",
        stage: "propose",
        code: "access_denied",
        policies: ["calendar.own"],
      }),
    ]);
    fake.enqueue(call("create_study_event", event("study")), FINAL);
    const night = await ask("owl", "Put a revision session on attention in my calendar");
    expect(night.values.denials).toEqual([
      expect.objectContaining({ check: "authorized", code: "access_denied", policies: ["calendar.hours"] }),
    ]);
    expect(await sandbox.calendarEvents()).toHaveLength(0);
    expect(fake.pending()).toBe(0);
  }, 180_000);

  it("a team-scoped reviewer is refused naming the policy; a policy changed while the review waited denies at execute", async () => {
    fake.enqueue(call("create_study_event", event("study")));
    const { threadId, values } = await ask("alice", "Put a revision session on attention in my calendar");
    expect(values.status).toBe("waiting_approval");

    // Another team's reviewer: a typed refusal naming the policy, before anything runs.
    const other = await postReview("ryan", threadId);
    expect(other.status).toBe(403);
    const body = (await other.json()) as { error: string; message: string };
    expect(body.error).toBe("approver_not_permitted");
    expect(body.message).toContain("review.other-team");
    // The owner through command.resume (the approver is the token's principal): asked again, the policy named.
    const resumed = (await (
      await client("alice")
    ).runs.wait(threadId, "agent", {
      command: { resume: { decisions: [{ type: "approve" }] } },
    })) as unknown as Values;
    expect(resumed.status).toBe("waiting_approval");
    expect(resumed.review_feedback).toMatchObject({ code: "approver_not_permitted", policies: ["review.not-own"] });

    // While the review waits, the policies change: calendar writes are frozen.
    await writeFile(
      rulesFile,
      `${RULES}\n@id("calendar.freeze")\n@code("access_denied")\nforbid (principal, action == ${A}::"create_study_event", resource);\n`,
    );
    fake.enqueue(FINAL);
    const approved = await postReview("rita", threadId);
    expect(approved.status).toBe(200);
    const after = (await (await client("alice")).threads.getState(threadId)).values as unknown as Values;
    expect(after.status).toBe("completed");
    expect(after.denials).toEqual([
      expect.objectContaining({
        check: "authorized",
        stage: "execute",
        code: "access_denied",
        policies: ["calendar.freeze"],
      }),
    ]);
    expect(await sandbox.calendarEvents()).toHaveLength(0);
    expect(fake.pending()).toBe(0);
  }, 180_000);

  it("an engine failure at evaluation refuses the call with its typed code (fail closed)", async () => {
    await writeFile(
      rulesFile,
      `${RULES}\n@id("overflow")\nforbid (principal, action == ${A}::"calculate_schedule", resource)\n` +
        "when { context.args has total_minutes && context.args.total_minutes * 9223372036854775807 > 0 };\n",
    );
    fake.enqueue(call("calculate_schedule", { total_minutes: 240, days: 4, daily_limit: 90 }), FINAL);
    const { values } = await ask("alice", "Split 4 hours of study over 4 days, at most 90 minutes a day");
    expect(values.denials).toEqual([
      expect.objectContaining({ check: "authorized", code: "access_denied", engine_error: "evaluation_error" }),
    ]);
    expect(fake.pending()).toBe(0);
  }, 180_000);
});
