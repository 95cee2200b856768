/**
 * Anthropic's prompt cache as the bench's Anthropic Messages endpoint plays
 * it, from the `cache_control` marks a request carries (none: nothing is
 * cached, every token billed in full). A request is read as Anthropic reads
 * it: the tools, then the system prompt, then each message, each a block of
 * o200k tokens (the marks themselves taken out, so a block is the same text
 * whether or not it is marked). At each marked block the prefix up to it is
 * written to the cache, unless it is there already or shorter than 1,024
 * tokens; a request reads the longest cached prefix ending at a marked block
 * or at one of the 20 blocks before it (Anthropic's look-back). Reported as
 * Anthropic reports usage: `input_tokens` is what was neither read nor
 * written, `cache_read_input_tokens` and `cache_creation_input_tokens` the rest.
 */
import { createHash } from "node:crypto";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";

const encoder = new Tiktoken(o200kBase);

/** Anthropic's shortest cacheable prefix (Sonnet and Opus). */
export const ANTHROPIC_CACHE_MINIMUM_TOKENS = 1_024;
/** How many blocks before a mark Anthropic looks back for a cached prefix. */
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;

export interface AnthropicUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A copy of `value` without any `cache_control` key, and whether it had one.
 * A string `content` (of a message or a `tool_result`) is the one text block
 * it stands for, as Anthropic reads it: marking a message turns its string
 * into that block, and unmarking it back, without changing what is cached.
 */
function unmarked(value: unknown): { value: unknown; marked: boolean } {
  if (Array.isArray(value)) {
    let marked = false;
    const items = value.map((item) => {
      const inner = unmarked(item);
      marked ||= inner.marked;
      return inner.value;
    });
    return { value: items, marked };
  }
  if (!isRecord(value)) return { value, marked: false };
  let marked = Object.hasOwn(value, "cache_control");
  const copy: Json = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "cache_control") continue;
    const inner = unmarked(key === "content" && typeof item === "string" ? [{ type: "text", text: item }] : item);
    marked ||= inner.marked;
    copy[key] = inner.value;
  }
  return { value: copy, marked };
}

/** The request's blocks in the order Anthropic reads them, as text, and which carry a mark. */
export function anthropicBlocks(body: Json): { text: string; marked: boolean }[] {
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  const system =
    body["system"] === undefined
      ? []
      : [typeof body["system"] === "string" ? [{ type: "text", text: body["system"] }] : body["system"]];
  const messages = Array.isArray(body["messages"]) ? body["messages"] : [];
  return [...tools, ...system, ...messages].map((part) => {
    const { value, marked } = unmarked(part);
    return { text: JSON.stringify(value), marked };
  });
}

/** The cache of one endpoint: prefix digests written so far. */
export class AnthropicCache {
  private readonly written = new Set<string>();

  /** The usage of one request, writing what its marks write. */
  usage(body: Json): AnthropicUsage {
    const blocks = anthropicBlocks(body);
    const ends: number[] = [];
    const digests: string[] = [];
    let total = 0;
    let digest = "";
    for (const block of blocks) {
      total += encoder.encode(block.text).length;
      digest = createHash("sha256").update(digest).update(block.text).digest("hex");
      ends.push(total);
      digests.push(digest);
    }
    const marks = blocks.flatMap((block, index) => (block.marked ? [index] : []));
    let read = 0;
    for (const mark of marks) {
      for (let index = mark; index >= Math.max(0, mark - ANTHROPIC_LOOKBACK_BLOCKS); index -= 1) {
        if (this.written.has(digests[index] ?? "")) {
          read = Math.max(read, ends[index] ?? 0);
          break;
        }
      }
    }
    let writtenUpTo = read;
    for (const mark of marks) {
      const end = ends[mark] ?? 0;
      if (end < ANTHROPIC_CACHE_MINIMUM_TOKENS) continue;
      this.written.add(digests[mark] ?? "");
      writtenUpTo = Math.max(writtenUpTo, end);
    }
    return {
      input_tokens: total - writtenUpTo,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: writtenUpTo - read,
    };
  }
}
