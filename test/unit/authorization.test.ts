/**
 * Principal-based authorization of a well-formed call, and host-injected
 * arguments.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog } from "../../src/mcp/catalog.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import {
  ACCESS_DENIED_MESSAGE,
  hasScopes,
  injectArguments,
  resourceAllowed,
  runBoundMatches,
} from "../../src/policy/authorization.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};
const noScopes: Principal = { ...alice, user_id: "eve", scopes: [] };

function tool(name: string, contractInput: Record<string, unknown>, properties: Record<string, unknown>): CatalogTool {
  const contract = ToolContractSchema.parse({ server: "notes", ...contractInput });
  const { tools } = buildCatalog(
    { [name]: contract },
    { notes: [{ name, inputSchema: { type: "object", properties } }] },
  );
  const built = tools[0];
  if (!built) throw new Error(`${name} not in catalog`);
  return built;
}

const readNote = tool(
  "read_note",
  {
    risk: "read",
    scopes: ["notes:read"],
    injected: { user_id: "principal.user_id" },
    resource: { argument: "note_id", pattern: "^([a-z0-9]+)\\.", principal_field: "courses" },
  },
  { user_id: { type: "string" }, note_id: { type: "string" } },
);

const updateCase = tool(
  "update_case",
  {
    risk: "write_reversible",
    scopes: ["cases:write"],
    run_bound: { case_id: { from_request: "c-[0-9]+" } },
    injected: { tenant_id: "principal.tenant", thread: "run.thread_id" },
  },
  { case_id: { type: "string" }, note: { type: "string" }, tenant_id: { type: "string" }, thread: { type: "string" } },
);
/** The pipeline's scope, run-bound and resource checks in their order (see decide.ts), as one verdict. */
function authorizeCall(
  target: CatalogTool,
  args: Record<string, unknown>,
  principal: Principal,
  runBound: Record<string, unknown>,
) {
  if (!hasScopes(principal, target.contract)) return { ok: false, code: "tool_not_permitted" };
  if (!runBoundMatches(target.contract, args, runBound))
    return { ok: false, code: "access_denied", message: ACCESS_DENIED_MESSAGE };
  if (!resourceAllowed(target.contract, args, principal))
    return { ok: false, code: "access_denied", message: ACCESS_DENIED_MESSAGE };
  return { ok: true };
}

const caseWorker: Principal = { ...alice, user_id: "carol", scopes: ["cases:write"] };

describe("authorizeCall: resource rule", () => {
  it("allows a note of one of the principal's courses", () => {
    expect(authorizeCall(readNote, { note_id: "cs301.lecture-07" }, alice, {})).toEqual({ ok: true });
  });

  it("denies a note of another course with access_denied", () => {
    expect(authorizeCall(readNote, { note_id: "db201.x" }, alice, {})).toEqual({
      ok: false,
      code: "access_denied",
      message: ACCESS_DENIED_MESSAGE,
    });
  });

  it("answers a malformed id exactly like an unauthorized one, so existence cannot be probed", () => {
    const unauthorized = authorizeCall(readNote, { note_id: "db201.x" }, alice, {});
    for (const malformed of ["no-dot-here", "CS301.x", ".x", ""]) {
      expect(authorizeCall(readNote, { note_id: malformed }, alice, {})).toEqual(unauthorized);
    }
  });

  it("denies a non-string resource argument", () => {
    expect(authorizeCall(readNote, { note_id: 301 }, alice, {})).toMatchObject({ ok: false, code: "access_denied" });
  });

  it("matches the owner key exactly, not as a prefix", () => {
    expect(authorizeCall(readNote, { note_id: "cs3010.x" }, alice, {})).toMatchObject({
      ok: false,
      code: "access_denied",
    });
    expect(authorizeCall(readNote, { note_id: "cs30.x" }, alice, {})).toMatchObject({
      ok: false,
      code: "access_denied",
    });
  });

  it("maps into the tenant when principal_field is tenant", () => {
    const tenantTool = tool(
      "read_doc",
      { risk: "read", resource: { argument: "doc", pattern: "^([a-z]+)/", principal_field: "tenant" } },
      { doc: { type: "string" } },
    );
    expect(authorizeCall(tenantTool, { doc: "uni/handbook" }, alice, {})).toEqual({ ok: true });
    expect(authorizeCall(tenantTool, { doc: "acme/handbook" }, alice, {})).toMatchObject({
      ok: false,
      code: "access_denied",
    });
  });
});

describe("authorizeCall: scopes", () => {
  it("is tool_not_permitted without the required scope, before the resource check", () => {
    const result = authorizeCall(readNote, { note_id: "cs301.x" }, noScopes, {});
    expect(result).toMatchObject({ ok: false, code: "tool_not_permitted" });
  });

  it("requires every scope of the contract", () => {
    const both = tool("both", { risk: "read", scopes: ["a", "b"] }, {});
    expect(hasScopes({ ...alice, scopes: ["a"] }, both.contract)).toBe(false);
    expect(hasScopes({ ...alice, scopes: ["b", "a"] }, both.contract)).toBe(true);
    expect(authorizeCall(both, {}, { ...alice, scopes: ["a"] }, {})).toMatchObject({
      ok: false,
      code: "tool_not_permitted",
    });
  });

  it("needs no scope when the contract lists none", () => {
    const open = tool("open", { risk: "read" }, {});
    expect(authorizeCall(open, {}, noScopes, {})).toEqual({ ok: true });
  });
});

describe("authorizeCall: run-bound arguments", () => {
  it("allows the value fixed for the run", () => {
    expect(authorizeCall(updateCase, { case_id: "c-1", note: "x" }, caseWorker, { case_id: "c-1" })).toEqual({
      ok: true,
    });
  });

  it("denies another value with access_denied and the uniform message", () => {
    expect(authorizeCall(updateCase, { case_id: "c-2", note: "x" }, caseWorker, { case_id: "c-1" })).toEqual({
      ok: false,
      code: "access_denied",
      message: ACCESS_DENIED_MESSAGE,
    });
  });

  it("compares strictly (no type coercion)", () => {
    expect(authorizeCall(updateCase, { case_id: 1 }, caseWorker, { case_id: "1" })).toMatchObject({
      ok: false,
      code: "access_denied",
    });
  });

  // DESIGN §5: the argument "must equal a value fixed for the run"; with no
  // value fixed nothing can equal it, so the call is denied.
  it("denies a run-bound argument when the run has no value fixed for it", () => {
    expect(authorizeCall(updateCase, { case_id: "c-2", note: "x" }, caseWorker, {})).toMatchObject({
      ok: false,
      code: "access_denied",
    });
  });
});

describe("runBoundMatches: an optional bound argument", () => {
  // updateCase's server schema lists case_id without `required`: the model may omit it.
  it("is optional in the schema the model sees", () => {
    expect(updateCase.model_schema.required ?? []).not.toContain("case_id");
  });

  it("denies a call that omits it, whatever the run fixed", () => {
    expect(runBoundMatches(updateCase.contract, { note: "x" }, { case_id: "c-1" })).toBe(false);
    expect(runBoundMatches(updateCase.contract, { note: "x" }, {})).toBe(false);
    expect(authorizeCall(updateCase, { note: "x" }, caseWorker, { case_id: "c-1" })).toEqual({
      ok: false,
      code: "access_denied",
      message: ACCESS_DENIED_MESSAGE,
    });
  });

  it("denies an explicit undefined, which is not the fixed value", () => {
    expect(runBoundMatches(updateCase.contract, { case_id: undefined }, { case_id: "c-1" })).toBe(false);
  });

  it("allows the fixed value, and a contract that binds nothing", () => {
    expect(runBoundMatches(updateCase.contract, { case_id: "c-1", note: "x" }, { case_id: "c-1" })).toBe(true);
    expect(runBoundMatches(readNote.contract, { note_id: "cs301.x" }, {})).toBe(true);
  });
});

describe("injectArguments", () => {
  it("fills user_id from the principal", () => {
    expect(injectArguments(readNote, { note_id: "cs301.x" }, alice, "thread-1")).toEqual({
      note_id: "cs301.x",
      user_id: "alice",
    });
  });

  it("overrides a same-named key the model supplied", () => {
    expect(injectArguments(readNote, { note_id: "cs301.x", user_id: "bob" }, alice, "thread-1")).toEqual({
      note_id: "cs301.x",
      user_id: "alice",
    });
  });

  it("fills tenant and thread id sources", () => {
    expect(injectArguments(updateCase, { case_id: "c-1" }, caseWorker, "thread-9")).toEqual({
      case_id: "c-1",
      tenant_id: "uni",
      thread: "thread-9",
    });
  });

  it("does not mutate the model's arguments", () => {
    const modelArgs = { note_id: "cs301.x" };
    injectArguments(readNote, modelArgs, alice, "thread-1");
    expect(modelArgs).toEqual({ note_id: "cs301.x" });
  });
});
