/**
 * `WARRANT_MODEL` as `provider:model`, the way LangChain's `initChatModel`
 * names a chat model. A leaf: parsing only, used by the settings (refused at
 * start) and the composition root.
 */
import { ConfigError } from "./errors.js";

/** The chat model packages Warrant can drive; `openai-compatible` is Chat Completions at a base URL. */
export type ModelProvider = "openai" | "anthropic" | "google-genai" | "openai-compatible";

export interface ModelName {
  provider: ModelProvider;
  /** The model as its provider names it (sent on the wire). */
  model: string;
}

const PROVIDERS: readonly ModelProvider[] = ["openai", "anthropic", "google-genai", "openai-compatible"];
/** Providers LangChain names whose package is not installed here: refused with the package to add. */
const MISSING_PACKAGES: Readonly<Record<string, string>> = {
  "google-vertexai": "@langchain/google-vertexai",
};

/**
 * `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`, `openai-compatible:qwen3:8b`
 * (only the first colon separates). A name without a known provider prefix is
 * the model of an OpenAI-compatible server, as before providers had names
 * (`WARRANT_MODEL=qwen3:8b` with `OPENAI_BASE_URL`).
 *
 * @throws ConfigError `config_invalid` for a provider whose package is not installed, or an empty model.
 */
export function parseModelName(name: string): ModelName {
  const colon = name.indexOf(":");
  const prefix = colon > 0 ? name.slice(0, colon) : "";
  if (Object.hasOwn(MISSING_PACKAGES, prefix)) {
    throw new ConfigError(
      "config_invalid",
      [
        `WARRANT_MODEL names provider ${prefix}, whose package ${MISSING_PACKAGES[prefix]} is not installed;`,
        "use openai:, anthropic:, google-genai: or openai-compatible:",
      ].join(" "),
    );
  }
  const provider = PROVIDERS.find((known) => known === prefix);
  if (provider === undefined) return { provider: "openai-compatible", model: name };
  const model = name.slice(colon + 1);
  if (model.trim() === "")
    throw new ConfigError("config_invalid", `WARRANT_MODEL names provider ${prefix} but no model`);
  return { provider, model };
}
