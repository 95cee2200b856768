/**
 * The model's tool calls, read from the raw text it sent: which of the
 * reply's representations holds the calls, and the argument text exactly as
 * the model wrote it (never LangChain's repaired parse, unless nothing else
 * exists). The text is passed on unparsed: `authorize` parses it strictly.
 */
import { createHash, randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { ModelBehaviorError } from "../errors.js";
import type { Proposal } from "../policy/contracts.js";
import { arrayField, isRecord, recordField, stringField, truncate } from "./reply-fields.js";

/** A tool call as found in one of the reply's representations, before checks. */
interface RawCall {
  id: string | undefined;
  name: string | undefined;
  /** The argument text as sent; undefined when this representation has none. */
  argumentText: string | undefined;
  /** LangChain's parsed arguments, kept only as the last-resort source of text. */
  parsedArguments?: Record<string, unknown>;
}

/**
 * Maps the reply's tool calls to proposals, in the order the model sent them.
 *
 * The argument text is the model's own: LangChain's `tool_calls[].args` is a
 * parsed object, and for streamed replies it comes from a partial-JSON parser
 * that silently completes truncated text (`{"q": "x", "limit": ` becomes
 * `{q: "x"}`), so it is only the last resort.
 *
 * A call without an id gets `call_<turn>_<index>_<tag>`, where `tag` is a
 * short hash of the reply's message id (random when the reply has none). The
 * turn and index make it readable; the tag keeps it unique in the thread, as
 * turns restart with every run and the ledger is keyed by call id.
 *
 * @throws ModelBehaviorError `model_invalid_arguments` for a call without a
 * name or two calls sharing an id: neither can be answered one-to-one.
 */
export function toProposals(reply: BaseMessage, turn: number): Proposal[] {
  const rawCalls = collectRawCalls(reply);
  // Hashed only when a call has no id of its own (most replies give every call one), once per reply.
  let tag: string | undefined;
  const tagOf = (): string => {
    tag = tag ?? replyTag(reply.id);
    return tag;
  };
  const seen = new Set<string>();
  return rawCalls.map((raw, index) => {
    if (raw.name === undefined || raw.name === "") {
      throw new ModelBehaviorError("model_invalid_arguments", `tool call ${index} has no name`);
    }
    const callId = raw.id !== undefined && raw.id !== "" ? raw.id : `call_${turn}_${index}_${tagOf()}`;
    if (seen.has(callId)) {
      throw new ModelBehaviorError(
        "model_invalid_arguments",
        `tool call id ${JSON.stringify(truncate(callId, 80))} is used twice`,
      );
    }
    seen.add(callId);
    return { call_id: callId, name: raw.name, raw_arguments: raw.argumentText ?? fallbackArgumentText(reply, raw) };
  });
}

function replyTag(messageId: string | undefined): string {
  return createHash("sha256")
    .update(messageId ?? randomUUID())
    .digest("hex")
    .slice(0, 8);
}

/** The most raw representation that has any calls: streamed chunks, then the wire format, then LangChain's parse. */
function collectRawCalls(reply: BaseMessage): RawCall[] {
  const fromChunks = callsFromChunks(reply);
  if (fromChunks.length > 0) return fromChunks;
  const fromWire = callsFromWire(reply);
  if (fromWire.length > 0) return fromWire;
  const fromParsed = callsFromParsed(reply);
  if (fromParsed.length > 0) return fromParsed;
  return callsFromLegacyFunctionCall(reply);
}

/**
 * Streamed replies: `tool_call_chunks` grouped by `index`, argument pieces
 * concatenated in arrival order. LangChain usually merged them already;
 * grouping again is harmless and covers chunks it left apart. Like LangChain,
 * the last non-empty id and name win (some servers repeat them per chunk).
 */
function callsFromChunks(reply: BaseMessage): RawCall[] {
  const chunks = arrayField(reply, "tool_call_chunks");
  const groups = new Map<string, RawCall>();
  chunks.forEach((chunk, position) => {
    if (!isRecord(chunk)) return;
    const index = chunk["index"];
    const key = typeof index === "number" || typeof index === "string" ? `index:${index}` : `position:${position}`;
    const group = groups.get(key) ?? { id: undefined, name: undefined, argumentText: undefined };
    const id = stringField(chunk, "id");
    const name = stringField(chunk, "name");
    const args = stringField(chunk, "args");
    if (id) group.id = id;
    if (name) group.name = name;
    if (args !== undefined) group.argumentText = (group.argumentText ?? "") + args;
    groups.set(key, group);
  });
  return [...groups.values()];
}

/** Non-streamed replies: the server's own `tool_calls`, kept by LangChain in `additional_kwargs`. */
function callsFromWire(reply: BaseMessage): RawCall[] {
  return arrayField(reply.additional_kwargs, "tool_calls")
    .filter(isRecord)
    .map((call) => {
      const fn = call["function"];
      return { id: stringField(call, "id"), name: stringField(fn, "name"), argumentText: stringField(fn, "arguments") };
    });
}

/**
 * Last resort, for replies built without the wire format: LangChain's valid
 * calls then its invalid ones (whose `args` is still the raw text). The
 * relative order of valid and invalid calls is lost here.
 */
function callsFromParsed(reply: BaseMessage): RawCall[] {
  const valid = arrayField(reply, "tool_calls")
    .filter(isRecord)
    .map((call) => ({
      id: stringField(call, "id"),
      name: stringField(call, "name"),
      argumentText: undefined,
      parsedArguments: recordField(call, "args"),
    }));
  const invalid = arrayField(reply, "invalid_tool_calls")
    .filter(isRecord)
    .map((call) => ({
      id: stringField(call, "id"),
      name: stringField(call, "name"),
      argumentText: stringField(call, "args"),
    }));
  return [...valid, ...invalid];
}

/** The pre-tools `function_call` form (finish reason `function_call`): one call, never with an id. */
function callsFromLegacyFunctionCall(reply: BaseMessage): RawCall[] {
  const call = isRecord(reply.additional_kwargs) ? reply.additional_kwargs["function_call"] : undefined;
  if (!isRecord(call)) return [];
  return [{ id: undefined, name: stringField(call, "name"), argumentText: stringField(call, "arguments") }];
}

/**
 * When the chosen representation lacks a call's text: the wire text or an
 * invalid call's raw text with the same id, else LangChain's parsed object
 * re-serialised (only then is the text not the model's own), else nothing,
 * which `authorize` rejects as invalid arguments.
 */
function fallbackArgumentText(reply: BaseMessage, raw: RawCall): string {
  const sameId = (call: Record<string, unknown>): boolean => raw.id !== undefined && call["id"] === raw.id;
  const wire = callsFromWire(reply).find((call) => raw.id !== undefined && call.id === raw.id)?.argumentText;
  if (wire !== undefined) return wire;
  const invalidText = stringField(arrayField(reply, "invalid_tool_calls").filter(isRecord).find(sameId), "args");
  if (invalidText !== undefined) return invalidText;
  const parsed =
    raw.parsedArguments ?? recordField(arrayField(reply, "tool_calls").filter(isRecord).find(sameId), "args");
  return parsed !== undefined ? JSON.stringify(parsed) : "";
}
