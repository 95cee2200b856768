/**
 * Identifiers of DESIGN §7. A fingerprint names an exact action (tool plus
 * canonical arguments) for repeat detection and approval binding.
 */
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    return text === undefined ? "null" : text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(",")}}`;
}

/** SHA-256 (hex) of the tool name and its canonical arguments. */
export function actionFingerprint(tool: string, args: unknown): string {
  return createHash("sha256").update(tool).update("\u0000").update(canonicalJson(args)).digest("hex");
}
