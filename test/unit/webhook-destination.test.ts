import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalAddress, isPublicAddress } from "../../src/server/webhooks/addresses.js";
import { checkDestination } from "../../src/server/webhooks/destination.js";
import { signatureHeader, verifySignature } from "../../src/server/webhooks/signature.js";

describe("isPublicAddress", () => {
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fd00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "64:ff9b::7f00:1",
    "2002:c0a8:101::",
    "[::1]",
    // IPv4-compatible (::/96): the IPv4 address in the low 32 bits decides.
    "::127.0.0.1",
    "::a00:1",
    "::169.254.169.254",
    "0:0:0:0:0:0:a9fe:a9fe",
    "::2",
    "::0.0.0.2",
    "not an address",
  ])("%s is not public", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
  it.each(["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"])("%s is public", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
  it("writes an IPv4-mapped address as the IPv4 it maps", () => {
    expect(canonicalAddress("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(canonicalAddress("0:0:0:0:0:0:0:1")).toBe(canonicalAddress("::1"));
  });
});

describe("checkDestination", () => {
  const allow = ["http://127.0.0.1:8080/hooks", "https://hooks.example.com/warrant/", "https://rebind.example.com/"];
  const resolve = async (host: string) =>
    host === "hooks.example.com"
      ? [{ address: "93.184.216.34", family: 4 }]
      : [
          { address: "93.184.216.34", family: 4 },
          { address: "::ffff:10.0.0.1", family: 6 },
        ];

  it("allows a listed public host and a loopback address listed as such", async () => {
    expect((await checkDestination("https://hooks.example.com/warrant/run", allow, resolve)).ok).toBe(true);
    expect((await checkDestination("http://127.0.0.1:8080/hooks/a", allow, resolve)).ok).toBe(true);
  });
  it.each([
    ["a name with any private address", "https://rebind.example.com/x"],
    ["an unlisted host", "https://evil.example.com/warrant/"],
    ["a path outside the prefix", "https://hooks.example.com/other"],
    ["a path that only starts like the prefix", "http://127.0.0.1:8080/hooksx"],
    ["another port", "http://127.0.0.1:8081/hooks"],
    ["another scheme", "http://hooks.example.com/warrant/"],
    ["credentials", "https://a:b@hooks.example.com/warrant/"],
    ["not a URL", "::::"],
    ["too long", `https://hooks.example.com/warrant/${"a".repeat(3000)}`],
  ])("refuses %s", async (_name, url) => {
    expect((await checkDestination(url, allow, resolve)).ok).toBe(false);
  });
});

describe("webhook signatures", () => {
  const secret = "s".repeat(32);
  it("verifies its own header and nothing else", () => {
    const now = 1_800_000_000;
    const header = signatureHeader(secret, now, '{"a":1}');
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(secret, header, '{"a":1}', { now })).toBe(true);
    expect(verifySignature(secret, header, '{"a":2}', { now })).toBe(false);
    expect(verifySignature(`${secret}x`, header, '{"a":1}', { now })).toBe(false);
    // Replayed later than the tolerance.
    expect(verifySignature(secret, header, '{"a":1}', { now: now + 301 })).toBe(false);
    expect(verifySignature(secret, "t=1,v1=zz", '{"a":1}', { now })).toBe(false);
    expect(verifySignature(secret, undefined, '{"a":1}', { now })).toBe(false);
  });

  it("signs <t>.<body> as documented: a known answer, computed apart from the code", () => {
    const now = 1_800_000_000;
    const body = '{"a":1}';
    const independent = createHmac("sha256", secret).update(`${now}.${body}`).digest("hex");
    // Fixed once with `node -e` (HMAC-SHA256, key "s" x 32, message '1800000000.{"a":1}').
    expect(independent).toBe("5900c81bf568d90e7fdb58396bea548309b292217acc7e6df76b53b4032a0471");
    expect(signatureHeader(secret, now, body)).toBe(`t=${now},v1=${independent}`);
    expect(verifySignature(secret, `t=${now},v1=${independent}`, body, { now })).toBe(true);
  });

  it("refuses a header whose t was altered, even within the tolerance", () => {
    const now = 1_800_000_000;
    const body = '{"a":1}';
    const v1 = createHmac("sha256", secret).update(`${now}.${body}`).digest("hex");
    for (const altered of [now - 1, now + 1, now + 60])
      expect(verifySignature(secret, `t=${altered},v1=${v1}`, body, { now })).toBe(false);
    // The body alone, unbound to a time, is not a signature either.
    const bodyOnly = createHmac("sha256", secret).update(body).digest("hex");
    expect(verifySignature(secret, `t=${now},v1=${bodyOnly}`, body, { now })).toBe(false);
  });
});

describe("admitWebhook (run creation)", () => {
  it("refuses a webhook by name when none are configured, and a malformed one as invalid", async () => {
    const { admitWebhook } = await import("../../src/server/webhooks/run-webhook.js");
    await expect(admitWebhook({}, "http://x")).rejects.toMatchObject({ code: "unsupported" });
    expect(await admitWebhook({}, undefined)).toBeUndefined();
    const webhooks = { check: async () => undefined, register: async () => undefined };
    await expect(admitWebhook({ webhooks }, { url: "x" })).rejects.toMatchObject({ code: "invalid_request" });
    await expect(admitWebhook({ webhooks }, "")).rejects.toMatchObject({ code: "invalid_request" });
    expect(await admitWebhook({ webhooks }, "https://hooks.example.com/a")).toBe("https://hooks.example.com/a");
  });
});
