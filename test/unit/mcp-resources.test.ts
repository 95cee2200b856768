/**
 * Resource and prompt normalization, and the mapping of thrown request
 * failures to typed codes. Pure, no I/O.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { classifyCallFailure, classifyRequestFailure } from "../../src/mcp/failures.js";
import { MAX_RESOURCE_CHARS, normalizePrompt, normalizeResource } from "../../src/mcp/resources.js";

describe("normalizeResource", () => {
  it("parses one JSON content by mime type or shape, and leaves other text unstructured", () => {
    expect(normalizeResource({ contents: [{ uri: "x://a", mimeType: "application/json", text: '{"a":1}' }] })).toEqual({
      ok: true,
      text: '{"a":1}',
      structured: { a: 1 },
    });
    expect(normalizeResource({ contents: [{ uri: "x://a", text: "[1,2]" }] })).toEqual({
      ok: true,
      text: "[1,2]",
      structured: [1, 2],
    });
    expect(
      normalizeResource({ contents: [{ uri: "x://a", mimeType: "application/vnd.api+json", text: "3" }] }),
    ).toMatchObject({ structured: 3 });
    expect(normalizeResource({ contents: [{ uri: "x://a", mimeType: "text/markdown", text: "[link](x)" }] })).toEqual({
      ok: true,
      text: "[link](x)",
      structured: undefined,
    });
    expect(normalizeResource({ contents: [{ uri: "x://a", mimeType: "application/json", text: "{broken" }] })).toEqual({
      ok: true,
      text: "{broken",
      structured: undefined,
    });
  });

  it("joins several contents, names binary ones, and cuts very long text", () => {
    expect(
      normalizeResource({
        contents: [
          { uri: "x://a", text: "{}" },
          { uri: "x://b", blob: "AAAA", mimeType: "image/png" },
        ],
      }),
    ).toEqual({ ok: true, text: "{}\n[binary content omitted: image/png]", structured: undefined });
    expect(normalizeResource({ contents: [] })).toEqual({ ok: true, text: "", structured: undefined });
    const long = normalizeResource({ contents: [{ uri: "x://a", text: "y".repeat(MAX_RESOURCE_CHARS + 5) }] });
    expect(long.ok && long.text.endsWith(`[truncated, ${MAX_RESOURCE_CHARS + 5} chars]`)).toBe(true);
  });

  it("calls a malformed answer a protocol_error", () => {
    for (const raw of [null, "text", {}, { contents: "x" }, { contents: [42] }, { contents: [{ uri: "x://a" }] }]) {
      expect(normalizeResource(raw), JSON.stringify(raw)).toEqual({
        ok: false,
        code: "protocol_error",
        message: "the server returned a malformed resource",
      });
    }
  });
});

describe("normalizePrompt", () => {
  it("keeps role and text, inlines embedded text resources and names other content", () => {
    expect(
      normalizePrompt({
        messages: [
          { role: "user", content: { type: "text", text: "hi" } },
          { role: "assistant", content: { type: "resource", resource: { uri: "x://a", text: "embedded" } } },
          { role: "user", content: { type: "audio", data: "AA", mimeType: "audio/wav" } },
        ],
      }),
    ).toEqual({
      ok: true,
      messages: [
        { role: "user", text: "hi" },
        { role: "assistant", text: "embedded" },
        { role: "user", text: "[audio content omitted]" },
      ],
    });
    expect(normalizePrompt({ messages: [] })).toEqual({ ok: true, messages: [] });
  });

  it("calls a malformed answer a protocol_error", () => {
    for (const raw of [
      undefined,
      { messages: {} },
      { messages: [{ role: "system", content: { type: "text", text: "x" } }] },
      { messages: [{ role: "user", content: { type: "text" } }] },
    ]) {
      expect(normalizePrompt(raw)).toMatchObject({ ok: false, code: "protocol_error" });
    }
  });
});

describe("failure classification", () => {
  it("maps MCP and transport errors to typed codes", () => {
    expect(classifyCallFailure(new McpError(ErrorCode.ConnectionClosed, "Connection closed")).code).toBe(
      "server_unavailable",
    );
    expect(classifyCallFailure(new McpError(ErrorCode.RequestTimeout, "late")).code).toBe("tool_timeout");
    expect(classifyCallFailure(new McpError(ErrorCode.InvalidParams, "bad")).code).toBe("invalid_arguments");
    expect(classifyCallFailure(new McpError(ErrorCode.InternalError, "boom")).code).toBe("protocol_error");
    expect(classifyCallFailure(new TypeError("fetch failed")).code).toBe("server_unavailable");
    expect(classifyCallFailure(new StreamableHTTPError(503, "down")).code).toBe("server_unavailable");
    expect(classifyCallFailure(new StreamableHTTPError(401, "no")).code).toBe("protocol_error");
  });

  it("takes a server's own verdict from the error data, but never a control or protocol code", () => {
    expect(classifyCallFailure(new McpError(-32003, "x", { code: "access_denied" }))).toEqual({
      code: "access_denied",
      message: "the server refused the request",
    });
    expect(classifyCallFailure(new McpError(-32003, "x", { code: "budget_exhausted" })).code).toBe("protocol_error");
    expect(classifyCallFailure(new McpError(-32003, "x", { code: "server_unavailable" })).code).toBe("protocol_error");
  });

  it("calls unknown resources and prompts not_found", () => {
    expect(classifyRequestFailure(new McpError(ErrorCode.InvalidParams, "Resource x://a not found")).code).toBe(
      "not_found",
    );
    expect(classifyRequestFailure(new McpError(-32002, "Resource not found")).code).toBe("not_found");
    expect(classifyRequestFailure(new McpError(ErrorCode.MethodNotFound, "Method not found")).code).toBe(
      "tool_not_permitted",
    );
    expect(classifyRequestFailure(new McpError(ErrorCode.InvalidParams, "Invalid arguments")).code).toBe(
      "invalid_arguments",
    );
    // A verdict in the data wins even when the message says "not found".
    expect(
      classifyRequestFailure(new McpError(ErrorCode.InvalidParams, "course not found", { code: "access_denied" })).code,
    ).toBe("access_denied");
  });
});
