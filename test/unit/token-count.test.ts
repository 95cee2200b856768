import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { plannerView } from "../../src/planners/context.js";
import { countTokens, encodingFor } from "../../src/planners/token-count.js";

describe("token counting", () => {
  it("knows OpenAI's model families and no other", () => {
    expect(encodingFor("gpt-4o-mini")).toBe("o200k_base");
    expect(encodingFor("gpt-4.1")).toBe("o200k_base");
    expect(encodingFor("openai/gpt-5")).toBe("o200k_base");
    expect(encodingFor("o3-mini")).toBe("o200k_base");
    expect(encodingFor("gpt-4-turbo")).toBe("cl100k_base");
    expect(encodingFor("gpt-3.5-turbo")).toBe("cl100k_base");
    expect(encodingFor("claude-sonnet-4-5")).toBeUndefined();
    expect(encodingFor("qwen3:8b")).toBeUndefined();
    expect(encodingFor("gpt-test")).toBeUndefined();
    expect(encodingFor(undefined)).toBeUndefined();
  });

  it("counts characters ÷ 4 where no tokenizer is known", () => {
    expect(countTokens("a".repeat(9))).toBe(3);
    expect(countTokens("a".repeat(9), "claude-sonnet-4-5")).toBe(3);
    expect(countTokens("")).toBe(0);
  });

  it("counts with the model's bundled ranks where one is known, the same count each time", () => {
    expect(countTokens("hello world", "gpt-4o")).toBe(2);
    expect(countTokens("hello world", "gpt-4")).toBe(2);
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(50);
    const first = countTokens(text, "gpt-4o");
    expect(first).toBe(countTokens(text, "gpt-4o"));
    expect(first).not.toBe(Math.ceil(text.length / 4));
  });

  it("counts special-token text in untrusted content as plain text", () => {
    expect(countTokens("<|endoftext|> and <|im_start|>", "gpt-4o")).toBeGreaterThan(2);
  });

  it("gives the planner's view the model's count", () => {
    const messages = [new HumanMessage("word ".repeat(400))];
    expect(plannerView(messages).tokens).toBe(Math.ceil(2000 / 4) + 4);
    expect(plannerView(messages, { model: "gpt-4o" }).tokens).toBe(countTokens("word ".repeat(400), "gpt-4o") + 4);
  });
});
