/**
 * The URL check of URL-mode elicitation (src/elicitation/url.ts): https, or
 * http on loopback only; no credentials; bounded length; no control or
 * invisible characters; the host is what the owner is shown. And the
 * handler's refusal of a URL is recognized as such (`isUrlRefusal`: the 2026-07-28 client turns it into a decline).
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import {
  elicitableCall,
  elicitationHandler,
  isUrlRefusal,
  type ElicitationBroker,
  type ElicitationQuestion,
} from "../../src/elicitation/client.js";
import { checkElicitationUrl, MAX_URL_LENGTH } from "../../src/elicitation/url.js";

describe("checkElicitationUrl", () => {
  it("keeps an https URL and names its host (normalized: lower case, no default port)", () => {
    expect(checkElicitationUrl("https://Consent.Example.com:443/connect?s=1#x")).toEqual({
      ok: true,
      url: "https://consent.example.com/connect?s=1#x",
      host: "consent.example.com",
    });
    expect(checkElicitationUrl("https://consent.example.com:8443/")).toMatchObject({
      host: "consent.example.com:8443",
    });
    expect(checkElicitationUrl("http://127.0.0.1:5173/flow")).toMatchObject({ ok: true, host: "127.0.0.1:5173" });
    expect(checkElicitationUrl("http://localhost/flow")).toMatchObject({ ok: true, host: "localhost" });
  });

  it.each([
    ["javascript:alert(1)", "scheme javascript: is not allowed"],
    ["data:text/html,<script>alert(1)</script>", "scheme data: is not allowed"],
    ["file:///etc/passwd", "scheme file: is not allowed"],
    ["http://consent.example.com/", "http is allowed for a loopback host only"],
    ["https://user:pass@consent.example.com/", "credentials in the url"],
    ["https://consent.example.com@evil.example/", "credentials in the url"],
    ["https://consent.example.com/a\r\nb", "control or invisible characters"],
    ["https://consent.example.com/\u0000", "control or invisible characters"],
    ["https://consent.example.com/ a", "control or invisible characters"],
    ["https://evil.example\u202e/moc.elpmaxe", "control or invisible characters"],
    ["https://consent\u200b.example.com/", "control or invisible characters"],
    [`https://consent.example.com/${"a".repeat(10_000)}`, `longer than ${MAX_URL_LENGTH} characters`],
    ["not a url", "control or invisible characters"],
    ["//consent.example.com/", "not a url"],
    ["", "no url"],
    [42, "no url"],
  ])("refuses %j: %s", (url, reason) => {
    expect(checkElicitationUrl(url)).toEqual({ ok: false, reason });
  });
});

describe("isUrlRefusal", () => {
  it("recognizes the handler's refusal of a URL, and nothing else", async () => {
    const asked: ElicitationQuestion[] = [];
    const broker: ElicitationBroker = {
      async ask(question) {
        asked.push(question);
        return { action: "accept", content: {} };
      },
    };
    const handle = elicitationHandler({ server: "booking", allowed: true, broker, log: () => undefined });
    const client = {};
    const call = { server: "booking", tool: "open", threadId: "t-1", principal: {} as Principal };
    const params = { mode: "url", message: "Open it", url: "javascript:alert(1)", elicitationId: "consent" };
    const refused = await elicitableCall(client, call, { timeout: 10_000 }, () =>
      handle(client, params, new AbortController().signal).then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    expect(refused).toMatchObject({ code: ErrorCode.InvalidParams });
    expect(isUrlRefusal(refused)).toBe(true);
    expect(asked).toEqual([]);
    expect(isUrlRefusal(new McpError(ErrorCode.InvalidParams, "bad", { code: "invalid_arguments" }))).toBe(false);
    expect(isUrlRefusal(new McpError(ErrorCode.InvalidParams, "elicitation_url_refused"))).toBe(false);
    expect(isUrlRefusal({ data: { code: "elicitation_url_refused" } })).toBe(false);
    expect(isUrlRefusal(undefined)).toBe(false);
  });
});
