/**
 * The URL check of URL-mode elicitation (src/elicitation/url.ts): https, or
 * http on loopback only; no credentials; bounded length; no control or
 * invisible characters; the host is what the owner is shown.
 */
import { describe, expect, it } from "vitest";
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
