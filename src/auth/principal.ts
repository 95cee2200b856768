/**
 * The principal: who a run acts for. It comes only from the authenticated
 * request (`configurable.langgraph_auth_user`) or the CLI's own directory
 * lookup; never from anything the model or the client body claims.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ConfigError } from "../errors.js";

const ID = /^[a-z0-9_-]{1,64}$/;

const GRANT_KIND = /^[a-z][a-z0-9_]{0,31}$/;
/** At most 16 kinds of grant, 64 values each. */
export const GrantsSchema = z
  .record(
    z.string().regex(GRANT_KIND),
    z
      .array(
        z
          .string()
          .min(1)
          .max(64)
          .regex(/^[A-Za-z0-9_.:-]+$/),
      )
      .max(64),
  )
  .refine((grants) => Object.keys(grants).length <= 16, { message: "at most 16 kinds of grant" });

/** The values a principal holds of one grant kind (none when absent). */
export function grantsOf(principal: Pick<Principal, "grants">, kind: string): readonly string[] {
  return Object.hasOwn(principal.grants, kind) ? (principal.grants[kind] ?? []) : [];
}

export const PrincipalSchema = z.object({
  user_id: z.string().regex(ID),
  tenant: z.string().regex(ID),
  role: z.string().min(1).max(32),
  scopes: z.array(z.string().min(1).max(64)).max(64),
  /**
   * Resource grants by kind, for contracts' resource rules (e.g.
   * `{"courses": ["cs301"]}` for the notes domain). The control plane only
   * matches names; what a grant means belongs to its domain.
   */
  grants: GrantsSchema.default({}),
  display_name: z.string().max(128).optional(),
  /** The user's IANA time zone (`Europe/Berlin`): what "tomorrow at 18:00" means for them. Absent: asked for. */
  time_zone: z
    .string()
    .max(64)
    .regex(/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9][A-Za-z0-9_+-]*)*$/)
    .optional(),
});
export type Principal = z.infer<typeof PrincipalSchema>;

const DirectorySchema = z.object({ principals: z.array(PrincipalSchema).min(1) });

/** The dev principal directory (alice, bob, rita, …), validated. */
export async function loadPrincipalDirectory(filePath: string): Promise<Map<string, Principal>> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(filePath, "utf8"));
  } catch (error) {
    throw new ConfigError("config_invalid", `cannot read principal directory ${filePath}: ${(error as Error).message}`);
  }
  const parsed = DirectorySchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(
      "config_invalid",
      `principal directory ${filePath}: ${parsed.error.issues[0]?.message ?? "invalid"}`,
    );
  }
  return new Map(parsed.data.principals.map((principal) => [principal.user_id, principal]));
}

/** Looks a user up; an unknown user is a `principal_unknown` ConfigError. */
export function findPrincipal(directory: Map<string, Principal>, userId: string): Principal {
  const principal = directory.get(userId);
  if (!principal) throw new ConfigError("principal_unknown", `no principal "${userId}" in the directory`);
  return principal;
}
