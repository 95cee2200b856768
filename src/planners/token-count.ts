/**
 * Tokens of a text as the model will count them, where its tokenizer is
 * known: OpenAI's model families through js-tiktoken's bundled ranks
 * (`o200k_base`, `cl100k_base`; read from node_modules, never fetched), and
 * characters ÷ 4 (the usual rule for English and JSON) for every other model
 * and when no model is named. js-tiktoken is pinned to one version, so a count,
 * and the compaction boundary computed from it, is the same at every replay.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { Tiktoken, type TiktokenBPE } from "js-tiktoken/lite";

/** The encodings this host bundles. */
export type Encoding = "o200k_base" | "cl100k_base";

/** Model names by family, after any `vendor/` prefix (`openai/gpt-4o` on a router counts as `gpt-4o`). */
const FAMILIES: readonly { pattern: RegExp; encoding: Encoding }[] = [
  { pattern: /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4)(\b|-|:|$)/i, encoding: "o200k_base" },
  { pattern: /^(gpt-4|gpt-3\.5|gpt-35)(\b|-|:|$)/i, encoding: "cl100k_base" },
];

/** The encoding of a model, or undefined when its tokenizer is not known here. */
export function encodingFor(model: string | undefined): Encoding | undefined {
  if (!model) return undefined;
  const name = model.slice(model.lastIndexOf("/") + 1);
  return FAMILIES.find((family) => family.pattern.test(name))?.encoding;
}

// The ranks are megabytes of JavaScript: loaded the first time a model of the family counts, not at import.
const load = createRequire(import.meta.url);
const encoders = new Map<Encoding, Tiktoken>();

function encoderFor(encoding: Encoding): Tiktoken {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    const ranks = load(`js-tiktoken/ranks/${encoding}`) as { default?: TiktokenBPE } & TiktokenBPE;
    encoder = new Tiktoken(ranks.default ?? ranks);
    encoders.set(encoding, encoder);
  }
  return encoder;
}

/**
 * Counts already made, by encoding and a digest of the text (hashing is far cheaper than encoding, and the
 * digest keeps the cache small): a thread's messages are read back from its checkpoint and counted at every turn.
 */
const counted = new Map<string, number>();
const MAX_COUNTED = 4_096;

/** Tokens of `text` for `model`: its tokenizer where known, else characters ÷ 4 rounded up. */
export function countTokens(text: string, model?: string): number {
  const encoding = encodingFor(model);
  if (encoding === undefined || text.length === 0) return Math.ceil(text.length / 4);
  const key = `${encoding}:${createHash("sha256").update(text).digest("base64")}`;
  const known = counted.get(key);
  if (known !== undefined) return known;
  // Special-token text (`<|endoftext|>`) in a tool result is counted as plain text, never refused.
  const tokens = encoderFor(encoding).encode(text, [], []).length;
  if (counted.size >= MAX_COUNTED) {
    const oldest = counted.keys().next();
    if (!oldest.done) counted.delete(oldest.value);
  }
  counted.set(key, tokens);
  return tokens;
}

/**
 * Loads the model's ranks on the next turn of the event loop, so the first count a request makes does not pay
 * for it (about a second and a half): a planner built at start calls this. Does nothing for an unknown tokenizer.
 */
export function preloadTokenizer(model: string | undefined): void {
  const encoding = encodingFor(model);
  if (encoding === undefined || encoders.has(encoding)) return;
  setImmediate(() => encoderFor(encoding)).unref();
}
