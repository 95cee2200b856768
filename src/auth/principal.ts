/**
 * The principal: who a run acts for. It comes only from the authenticated
 * request (`configurable.langgraph_auth_user`) or the CLI's own directory
 * lookup; never from anything the model or the client body claims.
 */
import { readFile } from "node:fs/promises";
import type { RunnableConfig } from "@langchain/core/runnables";
import { z } from "zod";
import { ConfigError } from "../errors.js";

const ID = /^[a-z0-9_-]{1,64}$/;

export const PrincipalSchema = z.object({
  user_id: z.string().regex(ID),
  tenant: z.string().regex(ID),
  role: z.string().min(1).max(32),
  scopes: z.array(z.string().min(1).max(64)).max(64),
  courses: z.array(z.string().min(1).max(16)).max(64).default([]),
  display_name: z.string().max(128).optional(),
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
    throw new ConfigError("config_invalid", `principal directory ${filePath}: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  }
  return new Map(parsed.data.principals.map((principal) => [principal.user_id, principal]));
}

/** Looks a user up; an unknown user is a `principal_unknown` ConfigError. */
export function findPrincipal(directory: Map<string, Principal>, userId: string): Principal {
  const principal = directory.get(userId);
  if (!principal) throw new ConfigError("principal_unknown", `no principal "${userId}" in the directory`);
  return principal;
}

/**
 * Reads the principal the server (or CLI) injected into the run config. It is
 * re-read on every node call, so a resume always acts for the resuming request.
 */
export function principalFromConfig(config: RunnableConfig | undefined): Principal {
  const candidate = config?.configurable?.["langgraph_auth_user"];
  const parsed = PrincipalSchema.safeParse(candidate);
  if (!parsed.success) {
    throw new ConfigError("principal_unknown", "the run has no authenticated principal (configurable.langgraph_auth_user)");
  }
  return parsed.data;
}
