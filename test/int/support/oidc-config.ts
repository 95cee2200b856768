/**
 * A `warrant.config.json` for the sign-in tests: the shipped one plus an
 * `auth.oidc` section naming the test providers, written to a temp file.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../../../src/env.js";

/** The study mapping by a `groups` list: students, reviewers (rita's group), staff, operators. */
export function groupsMapping(issuer: string, extra: Record<string, unknown> = {}) {
  return {
    issuer,
    audience: "warrant-api",
    client_id: "warrant-page",
    scopes: ["openid", "profile", "email", "groups", "api"],
    resource: "urn:warrant:api",
    jwks_cooldown_seconds: 1,
    tenant: { fixed: "uni" },
    groups: {
      "study-reviewers": {
        role: "reviewer",
        scopes: ["notes:read", "approvals:decide"],
        grants: { courses: ["cs301", "db201", "ph110"] },
      },
      "study-students": {
        role: "student",
        scopes: ["notes:read", "calendar:read", "calendar:write"],
        grants: { courses: ["cs301"] },
      },
      "study-staff": { role: "staff", scopes: ["notes:read"], grants: { courses: ["cs301"] } },
      "warrant-operators": { role: "operator", operator: true },
    },
    ...extra,
  };
}

/** The mapping by roles under a namespaced claim, the tenant from a `tenant` claim. */
export const ROLES_CLAIM = "https://warrant.example/roles";
export function rolesMapping(issuer: string) {
  return {
    issuer,
    audience: "warrant-api",
    jwks_cooldown_seconds: 1,
    claims: { groups: ROLES_CLAIM },
    tenant: { claim: "tenant" },
    groups: {
      reviewer: { role: "reviewer", scopes: ["notes:read", "approvals:decide"] },
      learner: {
        role: "student",
        scopes: ["notes:read", "calendar:read", "calendar:write"],
        grants: { courses: ["db201"] },
      },
    },
  };
}

export async function writeOidcConfig(
  oidc: Record<string, unknown>,
): Promise<{ path: string; remove(): Promise<void> }> {
  const shipped = JSON.parse(await fs.readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8")) as Record<
    string,
    unknown
  >;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-oidc-"));
  const file = path.join(dir, "warrant.config.json");
  await fs.writeFile(file, JSON.stringify({ ...shipped, auth: { oidc } }, null, 2));
  return { path: file, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}
