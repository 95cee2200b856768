/**
 * The peers' model: a deterministic chat model that follows bench/script.ts
 * (one `search_notes` call per step, then the final answer), so the prebuilt
 * agents make exactly the calls Warrant's scripted planner proposes. Binding
 * tools changes nothing: the script already knows its one tool.
 */
import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { FINAL_ANSWER, TOOL_NAME, USER_ID, nextMove } from "./script.js";

function textOf(message: BaseMessage | undefined): string {
  return typeof message?.content === "string" ? message.content : "";
}

export class ScriptedChatModel extends BaseChatModel {
  constructor() {
    super({});
  }

  static override lc_name(): string {
    return "BenchScriptedChatModel";
  }

  override _llmType(): string {
    return "bench-scripted";
  }

  override bindTools(): this {
    return this;
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const request = textOf(messages.find((message) => HumanMessage.isInstance(message)));
    const done = messages.filter((message) => ToolMessage.isInstance(message)).length;
    const move = nextMove(request, done);
    const message = move
      ? new AIMessage({
          content: "",
          tool_calls: [
            { id: `call_${randomUUID()}`, name: TOOL_NAME, args: { ...move, user_id: USER_ID }, type: "tool_call" },
          ],
        })
      : new AIMessage(FINAL_ANSWER);
    return { generations: [{ text: textOf(message), message }] };
  }
}
