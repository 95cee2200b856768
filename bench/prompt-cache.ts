/**
 * Prompt-cache figures from the request bodies the scripted endpoint saw,
 * one thread at a time, per variant:
 *
 *   input_tokens             o200k tokens of every request (tools, then
 *                            messages, each as the JSON sent: the order a
 *                            provider's cache reads them)
 *   prefix_reused_tokens     tokens of each request equal to the start of the
 *                            thread's previous request
 *   openai_cacheable_tokens  what OpenAI's prefix cache serves of that:
 *                            nothing below 1,024 tokens, then in 128-token steps
 *   effective_input_tokens   uncached + 10% of cached (cached input is about
 *                            a tenth of the price)
 *   anthropic_effective_input_tokens
 *                            the same thread under Anthropic's pricing rules:
 *                            nothing is cached without `cache_control`
 *                            breakpoints (the peers, bound as their users bind
 *                            ChatAnthropic, set none: every token in full);
 *                            with them (Warrant) the stable part of a request
 *                            (everything but the appended note) that the
 *                            previous request wrote is read at 10%, the rest
 *                            of it written at 125%, the note in full; a
 *                            prefix under 1,024 tokens is neither
 *   append_only_ceiling_tokens
 *                            what prefix_reused_tokens would be if every
 *                            request started with the whole previous one
 *                            (the most any request can reuse: the new tail of
 *                            each request and the whole first request are new)
 *   append_only_ceiling_ratio
 *                            that ceiling as a share of input_tokens: for a
 *                            thread whose requests only grow it is exactly
 *                            1 − (last request) / input_tokens, whatever the
 *                            agent does
 *   growth_tokens_per_request
 *                            how much a request adds on average:
 *                            (last − first request) / (requests − 1)
 *   growth_for_95_percent_tokens
 *                            the most a request may add, on average and
 *                            evenly, for an append-only thread of this many
 *                            requests starting from this first request to
 *                            reuse 95% of its input (null below 20 requests,
 *                            where not even no growth does, and from 40,
 *                            where any growth does)
 *   requests_extending_previous
 *                            requests whose tools and messages start with every
 *                            part of the previous request, unchanged
 *
 * Counted with js-tiktoken's bundled o200k_base ranks (no network).
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";

const encoder = new Tiktoken(o200kBase);

/** OpenAI's rule: a cached prefix is at least this long… */
export const CACHE_MINIMUM_TOKENS = 1_024;
/** …and grows in steps of this many tokens. */
export const CACHE_STEP_TOKENS = 128;
/** The price of a cached input token relative to an uncached one. */
export const CACHED_PRICE = 0.1;
/** Anthropic: a cache read costs 10% of input, a cache write (5-minute) 125%. */
export const ANTHROPIC_READ_PRICE = 0.1;
export const ANTHROPIC_WRITE_PRICE = 1.25;
/** USD per million input tokens the dollar figures use (list prices: gpt-5, claude-sonnet-4-5). */
export const INPUT_USD_PER_MILLION = { openai: 1.25, anthropic: 3 } as const;

export interface CacheFigures {
  requests: number;
  input_tokens: number;
  prefix_reused_tokens: number;
  openai_cacheable_tokens: number;
  effective_input_tokens: number;
  anthropic_effective_input_tokens: number;
  append_only_ceiling_tokens: number;
  append_only_ceiling_ratio: number;
  growth_tokens_per_request: number;
  growth_for_95_percent_tokens: number | null;
  requests_extending_previous: number;
  /** Input tokens of each request, in order. */
  per_request_input_tokens: number[];
}

/** The parts of a request in the order a provider reads them: the tools block, then each message, as JSON. */
function requestParts(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  const messages = Array.isArray(body["messages"]) ? body["messages"] : [];
  return [...tools, ...messages].map((part) => JSON.stringify(part));
}

/** One request as the tokens a provider reads, in order: the tools block, then each message. */
export function requestText(body: Record<string, unknown>): string {
  return requestParts(body).join("\n");
}

/** Whether `parts` start with every one of `previous`, unchanged. */
function startsWithAll(parts: readonly string[], previous: readonly string[]): boolean {
  return previous.length <= parts.length && previous.every((part, index) => parts[index] === part);
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a[index] === b[index]) index += 1;
  return index;
}

/** What OpenAI's cache serves of a shared prefix of `shared` tokens. */
export function cacheable(shared: number): number {
  if (shared < CACHE_MINIMUM_TOKENS) return 0;
  return CACHE_MINIMUM_TOKENS + Math.floor((shared - CACHE_MINIMUM_TOKENS) / CACHE_STEP_TOKENS) * CACHE_STEP_TOKENS;
}

/** A request's parts without the note appended after its transcript (a trailing system message): what stays. */
function stableParts(body: Record<string, unknown>): string[] {
  const parts = requestParts(body);
  const messages = Array.isArray(body["messages"]) ? (body["messages"] as unknown[]) : [];
  const last = messages.at(-1);
  const appended =
    messages.length > 1 &&
    typeof last === "object" &&
    last !== null &&
    (last as Record<string, unknown>)["role"] === "system";
  return appended ? parts.slice(0, -1) : parts;
}

/**
 * The figures of one thread's requests, in the order they were sent.
 * `breakpoints`: whether the agent sets Anthropic `cache_control` marks (Warrant does; the peers do not).
 */
export function cacheFigures(bodies: readonly Record<string, unknown>[], breakpoints = false): CacheFigures {
  let previousStable = { text: "", tokens: 0 };
  let previous: number[] = [];
  let previousParts: string[] | undefined;
  const figures: CacheFigures = {
    requests: bodies.length,
    input_tokens: 0,
    prefix_reused_tokens: 0,
    openai_cacheable_tokens: 0,
    effective_input_tokens: 0,
    anthropic_effective_input_tokens: 0,
    append_only_ceiling_tokens: 0,
    append_only_ceiling_ratio: 0,
    growth_tokens_per_request: 0,
    growth_for_95_percent_tokens: null,
    requests_extending_previous: 0,
    per_request_input_tokens: [],
  };
  for (const body of bodies) {
    const parts = requestParts(body);
    const tokens = encoder.encode(parts.join("\n"));
    if (previousParts !== undefined && startsWithAll(parts, previousParts)) figures.requests_extending_previous += 1;
    previousParts = parts;
    figures.append_only_ceiling_tokens += Math.min(previous.length, tokens.length);
    const shared = commonPrefix(previous, tokens);
    const cached = cacheable(shared);
    figures.input_tokens += tokens.length;
    figures.prefix_reused_tokens += shared;
    figures.openai_cacheable_tokens += cached;
    figures.effective_input_tokens += tokens.length - cached + CACHED_PRICE * cached;
    figures.per_request_input_tokens.push(tokens.length);
    previous = tokens;
    if (!breakpoints) figures.anthropic_effective_input_tokens += tokens.length;
    else {
      // Compared as text: the tokens at the joint of two parts merge differently once more follows.
      const text = stableParts(body).join("\n");
      const stable = Math.min(tokens.length, encoder.encode(text).length);
      const hit =
        previousStable.tokens >= CACHE_MINIMUM_TOKENS &&
        previousStable.tokens <= stable &&
        text.startsWith(previousStable.text);
      const read = hit ? previousStable.tokens : 0;
      const written = stable >= CACHE_MINIMUM_TOKENS ? stable - read : 0;
      const full = Math.max(0, tokens.length - read - written);
      figures.anthropic_effective_input_tokens += ANTHROPIC_READ_PRICE * read + ANTHROPIC_WRITE_PRICE * written + full;
      previousStable = { text, tokens: stable };
    }
  }
  figures.effective_input_tokens = Math.round(figures.effective_input_tokens);
  figures.anthropic_effective_input_tokens = Math.round(figures.anthropic_effective_input_tokens);
  figures.append_only_ceiling_ratio =
    figures.input_tokens > 0 ? figures.append_only_ceiling_tokens / figures.input_tokens : 0;
  const lengths = figures.per_request_input_tokens;
  const first = lengths[0] ?? 0;
  figures.growth_tokens_per_request = lengths.length > 1 ? ((lengths.at(-1) ?? 0) - first) / (lengths.length - 1) : 0;
  figures.growth_for_95_percent_tokens = growthFor(REUSE_TARGET, first, lengths.length);
  return figures;
}

/** The target for research_30: prefix_reused_tokens ≥ 95% of input_tokens. */
export const REUSE_TARGET = 0.95;

/**
 * The largest even growth g per request at which an append-only thread of
 * `requests` requests, the first `first` tokens long, reuses `target` of its
 * input. Its requests are L_i = first + i·g (i = 0 … n−1); every token is
 * reused but the last request's, so the reused share is
 * 1 − (first + (n−1)·g) / (n·first + g·n(n−1)/2) ≥ target, which solves to
 * g ≤ first·(u·n − 1) / ((n − 1)·(1 − u·n/2)) with u = 1 − target
 * (n = 31, u = 0.05: g ≤ 0.0815·first). Null when u·n ≤ 1 (even requests
 * that never grow reuse only (n−1)/n of the input) and when u·n ≥ 2 (any
 * growth reaches it).
 */
export function growthFor(target: number, first: number, requests: number): number | null {
  const unreused = 1 - target;
  if (requests < 2 || unreused * requests <= 1) return null;
  const denominator = (requests - 1) * (1 - (unreused * requests) / 2);
  // From u·n ≥ 2 on (40 requests at 95%) any growth reaches the target: no bound, reported as null too.
  return denominator <= 0 ? null : (first * (unreused * requests - 1)) / denominator;
}

/** Whether every request of the thread still carries the user's request text. */
export function requestAlwaysSeen(bodies: readonly Record<string, unknown>[], request: string): boolean {
  return bodies.every((body) =>
    (Array.isArray(body["messages"]) ? body["messages"] : []).some(
      (message) =>
        typeof message === "object" &&
        message !== null &&
        (message as Record<string, unknown>)["role"] === "user" &&
        (message as Record<string, unknown>)["content"] === request,
    ),
  );
}
