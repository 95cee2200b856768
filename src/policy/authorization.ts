/**
 * Principal-based authorization of one well-formed call. It runs before any
 * existence check, so an unauthorized resource and a missing one look the
 * same (`access_denied`).
 */
import { createHash } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import { actionFingerprint } from "../runtime/fingerprint.js";
import type { CatalogTool } from "../mcp/catalog.js";
import type { ToolContract } from "./config.js";

export type Authorization = { ok: true } | { ok: false; code: "access_denied" | "tool_not_permitted"; message: string };

export const ACCESS_DENIED_MESSAGE = "the resource does not exist or is not accessible";

/** Whether the principal holds every scope the contract requires. */
export function hasScopes(principal: Principal, contract: ToolContract): boolean {
  return contract.scopes.every((scope) => principal.scopes.includes(scope));
}

/** Checks scopes, run-bound arguments and the contract's resource rule. */
export function authorizeCall(
  tool: CatalogTool,
  args: Record<string, unknown>,
  principal: Principal,
  runBound: Record<string, unknown>,
): Authorization {
  if (!hasScopes(principal, tool.contract)) {
    return { ok: false, code: "tool_not_permitted", message: `${tool.name} is not available to you` };
  }
  // Fail closed: a run-bound argument needs a value fixed for the run, and must equal it.
  for (const name of tool.contract.run_bound) {
    if (Object.hasOwn(args, name) && (!Object.hasOwn(runBound, name) || args[name] !== runBound[name])) {
      return { ok: false, code: "access_denied", message: ACCESS_DENIED_MESSAGE };
    }
  }
  const rule = tool.contract.resource;
  if (rule && Object.hasOwn(args, rule.argument)) {
    const value = args[rule.argument];
    const owner = typeof value === "string" ? new RegExp(rule.pattern).exec(value)?.[1] : undefined;
    const allowed = rule.principal_field === "courses" ? principal.courses : [principal.tenant];
    if (owner === undefined || !allowed.includes(owner)) {
      return { ok: false, code: "access_denied", message: ACCESS_DENIED_MESSAGE };
    }
  }
  return { ok: true };
}

/** The server-side arguments: the model's plus host-injected values from the principal and run. */
export function injectArguments(
  tool: CatalogTool,
  modelArgs: Record<string, unknown>,
  principal: Principal,
  threadId: string,
): Record<string, unknown> {
  const args: Record<string, unknown> = { ...modelArgs };
  for (const [name, source] of Object.entries(tool.contract.injected)) {
    args[name] =
      source === "principal.user_id"
        ? principal.user_id
        : source === "principal.tenant"
          ? principal.tenant
          : source === "run.thread_id"
            ? threadId
            : idempotencyKey(threadId, tool.name, modelArgs);
  }
  return args;
}

/**
 * One business intent = the same action in the same thread, so the key is
 * derived from both: every retry or re-proposal of that intent reuses it and
 * the server applies the write at most once.
 */
export function idempotencyKey(threadId: string, tool: string, modelArgs: Record<string, unknown>): string {
  return `wk_${createHash("sha256").update(threadId).update("\u0000").update(actionFingerprint(tool, modelArgs)).digest("hex").slice(0, 40)}`;
}
