/**
 * Thrown MCP request failures → our typed error codes (DESIGN §6). Messages
 * are fixed phrases: a server's own error text, stack or validation dump
 * never reaches the model through here.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { TaskEnded } from "./tasks.js";
import { errorClassOf, isToolErrorCode, type ToolErrorCode, isAuthorizationRequired } from "../errors.js";

export interface Failure {
  code: ToolErrorCode;
  message: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Codes a server may name in an error's data: its own verdicts, never our control or protocol codes. */
function serverVerdict(data: unknown): ToolErrorCode | undefined {
  if (!isRecord(data) || !isToolErrorCode(data["code"])) return undefined;
  // Only the host asks an owner to authorize, with a URL it obtained itself.
  if (data["code"] === "authorization_required") return undefined;
  const errorClass = errorClassOf(data["code"]);
  return errorClass === "contract" || errorClass === "authorization" || errorClass === "business"
    ? data["code"]
    : undefined;
}

/** MCP's "resource not found" code (spec 2025-06-18), not in the SDK's enum. */
const RESOURCE_NOT_FOUND = -32002;

/** Maps a thrown `tools/call` failure onto our error classes. */
export function classifyCallFailure(error: unknown): Failure {
  if (error instanceof TaskEnded) return { code: error.code, message: error.message };
  if (isAuthorizationRequired(error))
    return { code: "authorization_required", message: `authorize Warrant at ${error.server} first` };
  if (error instanceof McpError) {
    // A server may name one of our codes in the error's data, e.g. `{ code: "access_denied" }`.
    const verdict = serverVerdict(error.data);
    if (verdict) return { code: verdict, message: "the server refused the request" };
    if (error.code === ErrorCode.RequestTimeout)
      return { code: "tool_timeout", message: "the tool did not answer in time" };
    if (error.code === ErrorCode.InvalidParams)
      return { code: "invalid_arguments", message: "the server rejected the arguments" };
    if (error.code === ErrorCode.ConnectionClosed)
      return { code: "server_unavailable", message: "the server connection closed" };
    return { code: "protocol_error", message: `MCP error ${error.code}` };
  }
  if (error instanceof StreamableHTTPError) {
    // The server answered, so it is up: it refused our credentials or the request.
    if (error.code === 401 || error.code === 403)
      return { code: "protocol_error", message: `the server refused the request (HTTP ${error.code})` };
    return {
      code: "server_unavailable",
      message: `the server could not serve the request (HTTP ${error.code ?? "error"})`,
    };
  }
  const name = isRecord(error) ? error["name"] : undefined;
  if (name === "AbortError" || name === "TimeoutError")
    return { code: "tool_timeout", message: "the tool did not answer in time" };
  return { code: "server_unavailable", message: "the server could not be reached" };
}

/** Maps a thrown `resources/read` or `prompts/get` failure; unknown names are `not_found`. */
export function classifyRequestFailure(error: unknown): Failure {
  if (error instanceof McpError) {
    // The server's own verdict wins over any reading of its error code or message.
    if (serverVerdict(error.data)) return classifyCallFailure(error);
    if (error.code === RESOURCE_NOT_FOUND) return { code: "not_found", message: "no such resource" };
    // The SDK's servers answer an unknown resource or prompt with InvalidParams "… not found".
    if (error.code === ErrorCode.InvalidParams && /not found/i.test(error.message))
      return { code: "not_found", message: "no such resource or prompt" };
    if (error.code === ErrorCode.MethodNotFound)
      return { code: "tool_not_permitted", message: "the server does not offer this request" };
  }
  return classifyCallFailure(error);
}
