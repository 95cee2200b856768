/**
 * Principal-based authorization of one well-formed call, as pure functions
 * the pipeline (`decide.ts`) names as checks. Resource rules run before any
 * existence check, so an unauthorized resource and a missing one look the
 * same (`access_denied`).
 */
import { createHash } from "node:crypto";
import { grantsOf, type Principal } from "../auth/principal.js";
import type { CatalogTool, ToolContract } from "./contracts.js";
import { actionFingerprint } from "./fingerprint.js";

export const ACCESS_DENIED_MESSAGE = "the resource does not exist or is not accessible";

/** Whether the principal holds every scope the contract requires. */
export function hasScopes(principal: Principal, contract: ToolContract): boolean {
  return contract.scopes.every((scope) => principal.scopes.includes(scope));
}

/**
 * Fail closed: every argument the contract binds to the run must be present
 * in the call, the run must have fixed a value for it, and the two must be
 * equal. A call that leaves the argument out is refused too, even when the
 * tool's schema makes it optional: a server reading "no case" as "any case
 * the caller may see" would otherwise let the model escape the run's binding.
 */
export function runBoundMatches(
  contract: ToolContract,
  args: Record<string, unknown>,
  runBound: Record<string, unknown>,
): boolean {
  for (const name of Object.keys(contract.run_bound)) {
    if (!Object.hasOwn(args, name) || !Object.hasOwn(runBound, name)) return false;
    if (args[name] !== runBound[name]) return false;
  }
  return true;
}

/**
 * Compiled resource patterns, by source text. Checked at authorize and again
 * at execute for every call, from the few patterns the config declares.
 * No `g` or `y` flag, so `exec` keeps no state between calls.
 */
const resourcePatterns = new Map<string, RegExp>();

function resourcePattern(source: string): RegExp {
  let regex = resourcePatterns.get(source);
  if (!regex) {
    regex = new RegExp(source);
    resourcePatterns.set(source, regex);
  }
  return regex;
}

/** The contract's resource rule: the argument's owner key must be one the principal holds (`tenant`, or a grant kind). */
export function resourceAllowed(contract: ToolContract, args: Record<string, unknown>, principal: Principal): boolean {
  const rule = contract.resource;
  if (!rule || !Object.hasOwn(args, rule.argument)) return true;
  const value = args[rule.argument];
  const owner = typeof value === "string" ? resourcePattern(rule.pattern).exec(value)?.[1] : undefined;
  const held = rule.principal_field === "tenant" ? [principal.tenant] : grantsOf(principal, rule.principal_field);
  return owner !== undefined && held.includes(owner);
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
  const hash = createHash("sha256").update(threadId).update("\u0000").update(actionFingerprint(tool, modelArgs));
  return `wk_${hash.digest("hex").slice(0, 40)}`;
}
