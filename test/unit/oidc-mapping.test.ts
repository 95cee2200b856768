/**
 * Claims to principal (src/auth/claim-mapping.ts), the `auth.oidc` config
 * (src/auth/oidc-config.ts) and the policy matrix rows of mapped groups:
 * pure, no I/O. The verification itself runs against a real provider in
 * test/int/oidc-api.test.ts.
 */
import { describe, expect, it } from "vitest";
import { principalFromClaims } from "../../src/auth/claim-mapping.js";
import { configuredDirectory, narrowingDirectory } from "../../src/auth/principal-directory.js";
import { ConfigError } from "../../src/errors.js";
import { parseConfig } from "../../src/policy/config.js";
import { mappedGroupPrincipals, policyMatrix } from "../../src/policy/matrix.js";
import { OidcConfigSchema, type OidcIssuerConfig } from "../../src/auth/oidc-config.js";
import { ReviewPolicySchema } from "../../src/policy/config.js";

const ISSUER = "https://idp.example.com/realms/uni";

function issuer(extra: Record<string, unknown> = {}): OidcIssuerConfig {
  const parsed = OidcConfigSchema.parse({
    issuers: [
      {
        issuer: ISSUER,
        audience: "warrant-api",
        tenant: { fixed: "uni" },
        groups: {
          "study-reviewers": {
            role: "reviewer",
            scopes: ["notes:read", "approvals:decide"],
            grants: { courses: ["db201"] },
          },
          "study-students": {
            role: "student",
            scopes: ["notes:read", "calendar:write"],
            grants: { courses: ["cs301"] },
          },
        },
        ...extra,
      },
    ],
  });
  return parsed.issuers[0] as OidcIssuerConfig;
}

describe("claims to principal", () => {
  it("maps groups: the first mapped group in config order gives the role; scopes and grants are the union", () => {
    const mapped = principalFromClaims(issuer(), {
      sub: "rita",
      name: "Rita",
      groups: ["study-students", "study-reviewers", "not-mapped"],
    });
    expect(mapped).toEqual({
      ok: true,
      operator: false,
      principal: {
        user_id: "rita",
        tenant: "uni",
        role: "reviewer",
        display_name: "Rita",
        scopes: ["notes:read", "approvals:decide", "calendar:write"],
        grants: { courses: ["db201", "cs301"] },
      },
    });
  });

  it("unknown groups grant nothing: no mapped group and no default is principal_unmapped", () => {
    expect(principalFromClaims(issuer(), { sub: "eve", groups: ["admins", "__proto__"] })).toMatchObject({
      ok: false,
      code: "principal_unmapped",
    });
    expect(principalFromClaims(issuer(), { sub: "eve" })).toMatchObject({ ok: false, code: "principal_unmapped" });
    const withDefault = issuer({ default: { role: "guest", scopes: ["notes:read"] } });
    expect(principalFromClaims(withDefault, { sub: "eve", groups: ["admins"] })).toMatchObject({
      ok: true,
      principal: { role: "guest", scopes: ["notes:read"], grants: {} },
    });
  });

  it("reads roles under a namespaced claim and the tenant from a claim", () => {
    const roles = issuer({
      claims: { groups: "https://warrant.example/roles" },
      tenant: { claim: "https://warrant.example/tenant" },
    });
    expect(
      principalFromClaims(roles, {
        sub: "carol",
        "https://warrant.example/roles": ["study-reviewers"],
        "https://warrant.example/tenant": "college",
      }),
    ).toMatchObject({ ok: true, principal: { user_id: "carol", tenant: "college", role: "reviewer" } });
    // A plain `groups` claim means nothing to an issuer whose groups live elsewhere.
    expect(
      principalFromClaims(roles, {
        sub: "carol",
        groups: ["study-reviewers"],
        "https://warrant.example/tenant": "college",
      }),
    ).toMatchObject({ ok: false, code: "principal_unmapped" });
  });

  it("a space-separated string of groups counts as a list", () => {
    expect(principalFromClaims(issuer(), { sub: "alice", groups: "study-students other" })).toMatchObject({
      ok: true,
      principal: { role: "student" },
    });
  });

  it("a subject that is not a user id is digested with the issuer; the same subject elsewhere differs", () => {
    const one = principalFromClaims(issuer(), { sub: "auth0|ABC", groups: ["study-students"] });
    const other = principalFromClaims(issuer({ issuer: "https://other.example.com" }), {
      sub: "auth0|ABC",
      groups: ["study-students"],
    });
    if (!one.ok || !other.ok) throw new Error("unmapped");
    expect(one.principal.user_id).toMatch(/^u-[0-9a-f]{40}$/);
    expect(other.principal.user_id).not.toBe(one.principal.user_id);
  });

  it("hostile claims are token_malformed, never an exception", () => {
    const hostile: Array<Record<string, unknown>> = [
      { groups: ["study-students"] },
      { sub: 42, groups: ["study-students"] },
      { sub: "", groups: ["study-students"] },
      { sub: "x".repeat(300), groups: ["study-students"] },
      { sub: "alice", groups: { "study-students": true } },
      { sub: "alice", groups: [["study-students"]] },
      { sub: "alice", groups: [1, 2] },
      { sub: "alice", groups: Array.from({ length: 300 }, (_, index) => `g${index}`) },
      { sub: "alice", groups: ["x".repeat(300)] },
    ];
    for (const claims of hostile)
      expect(principalFromClaims(issuer(), claims), JSON.stringify(claims).slice(0, 60)).toMatchObject({
        ok: false,
        code: "token_malformed",
      });
    const badTenant = issuer({ tenant: { claim: "tenant" } });
    for (const tenant of [undefined, "", "UNI", "a b", "x".repeat(65), ["uni"], { uni: true }, "uni\u0000"])
      expect(principalFromClaims(badTenant, { sub: "alice", tenant, groups: ["study-students"] })).toMatchObject({
        ok: false,
        code: "token_malformed",
      });
  });

  it("control characters never reach the display name", () => {
    const mapped = principalFromClaims(issuer(), {
      sub: "alice",
      name: "Al\u0000i\u001bce\u0085",
      groups: ["study-students"],
    });
    expect(mapped).toMatchObject({ ok: true, principal: { display_name: "Alice" } });
  });
});

describe("the auth.oidc config", () => {
  const base = { issuer: ISSUER, audience: "warrant-api", tenant: { fixed: "uni" }, groups: {} };
  const refused: Array<[string, unknown]> = [
    ["an HMAC algorithm", { issuers: [{ ...base, algorithms: ["HS256"] }] }],
    ["alg none", { issuers: [{ ...base, algorithms: ["none"] }] }],
    ["http off loopback", { issuers: [{ ...base, issuer: "http://idp.example.com" }] }],
    ["a query in the issuer", { issuers: [{ ...base, issuer: `${ISSUER}?x=1` }] }],
    ["the same issuer twice", { issuers: [base, base] }],
    ["no issuer", { issuers: [] }],
    ["a tenant that is not an id", { issuers: [{ ...base, tenant: { fixed: "Uni Tenant" } }] }],
    ["both a claim and a fixed tenant", { issuers: [{ ...base, tenant: { fixed: "uni", claim: "t" } }] }],
    ["a skew over 5 minutes", { issuers: [{ ...base, clock_skew_seconds: 3600 }] }],
    ["an unknown key", { issuers: [{ ...base, jku_allowed: true }] }],
    ["a group without a role", { issuers: [{ ...base, groups: { staff: { scopes: [] } } }] }],
    ["a claim name with spaces", { issuers: [{ ...base, claims: { groups: "my groups" } }] }],
  ];
  for (const [name, value] of refused)
    it(`refuses ${name}`, () => {
      expect(OidcConfigSchema.safeParse(value).success).toBe(false);
    });

  it("defaults: RS256/ES256/EdDSA, 30 s skew, sub/groups/name claims, dev tokens on, IdP authority", () => {
    const parsed = OidcConfigSchema.parse({ issuers: [base] });
    expect(parsed).toMatchObject({ dev_tokens: true, directory: false });
    expect(parsed.issuers[0]).toMatchObject({
      algorithms: ["RS256", "ES256", "EdDSA"],
      clock_skew_seconds: 30,
      claims: { user: "sub", groups: "groups", name: "name" },
    });
    expect(OidcConfigSchema.parse({ issuers: [{ ...base, issuer: "http://127.0.0.1:8080" }] }).issuers).toHaveLength(1);
  });

  it("a config without auth has no oidc (dev tokens only, as before)", () => {
    expect(parseConfig(JSON.stringify({ servers: {}, tools: {} })).auth).toEqual({});
  });
});

describe("the policy matrix of mapped groups", () => {
  it("lists each mapped group as a principal; the reviewer group decides the student group's writes", () => {
    const oidc = OidcConfigSchema.parse({
      issuers: [
        {
          issuer: ISSUER,
          audience: "warrant-api",
          tenant: { fixed: "uni" },
          groups: {
            "study-reviewers": { role: "reviewer", scopes: ["approvals:decide"] },
            "study-students": { role: "student", scopes: ["calendar:write"] },
          },
        },
      ],
    });
    const principals = mappedGroupPrincipals(oidc);
    expect(principals.map((principal) => principal.user_id)).toEqual([
      "study-reviewers@idp.example.com",
      "study-students@idp.example.com",
    ]);
    const rows = policyMatrix({
      tools: [
        {
          name: "create_study_event",
          server: "calendar",
          description: "",
          model_schema: {},
          contract: { risk: "write_reversible", scopes: ["calendar:write"], stages: ["any"] },
        } as never,
      ],
      principals,
      reviewPolicy: ReviewPolicySchema.parse({}),
      stages: ["default"],
    });
    const students = rows.find((row) => row.principal === "study-students@idp.example.com");
    expect(students?.offered).toEqual(["create_study_event"]);
    expect(students?.review[0]?.deciders).toEqual([
      "study-reviewers@idp.example.com",
      "study-students@idp.example.com",
    ]);
    expect(mappedGroupPrincipals(undefined)).toEqual([]);
  });
});

describe("the directory beside an identity provider", () => {
  const listed = {
    user_id: "rita",
    tenant: "uni",
    role: "reviewer",
    scopes: ["notes:read"],
    grants: { courses: ["cs301"] },
  };
  const inner = {
    current: async (principal: { user_id: string; tenant: string }) => {
      if (principal.user_id !== "rita" || principal.tenant !== "uni")
        throw new ConfigError("principal_revoked", "gone");
      return listed;
    },
  };
  const fromIdp = {
    user_id: "rita",
    tenant: "uni",
    role: "reviewer",
    scopes: ["notes:read", "approvals:decide"],
    grants: { courses: ["cs301", "db201"], rooms: ["a1"] },
  };

  it("narrows: only scopes and grants both give; the IdP's role stays", async () => {
    expect(await narrowingDirectory(inner).current(fromIdp)).toEqual({
      ...fromIdp,
      scopes: ["notes:read"],
      grants: { courses: ["cs301"] },
    });
  });

  it("refuses a user it does not list", async () => {
    await expect(narrowingDirectory(inner).current({ ...fromIdp, user_id: "eve" })).rejects.toMatchObject({
      code: "principal_revoked",
    });
  });

  it("is chosen by auth.oidc: none without it narrows nothing away from the IdP", async () => {
    const idpOnly = configuredDirectory("/nonexistent/principals.json", async () => ({ directory: false }));
    expect(await idpOnly.current(fromIdp)).toEqual(fromIdp);
  });
});
