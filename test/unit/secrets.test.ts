import { describe, expect, it } from "vitest";
import {
  compilePatterns,
  createSecretScanner,
  MARKER_PATTERN,
  markersIn,
  MAX_SCAN_DEPTH,
  redactionDetail,
  redactionKeyFrom,
} from "../../src/secrets/scanner.js";

const KEY = new Uint8Array(32).fill(7);
const scanner = createSecretScanner({ key: KEY });

// Fake values in the shapes the scanner must catch (none of them is real).
const OPENAI = "sk-proj-FAKEfake0123456789abcdefABCDEF";
const AWS = "AKIAFAKE0123456789AB";
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWZha2U";
const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEfakefakefake\nAKIAFAKE0123456789AB\n-----END RSA PRIVATE KEY-----";
const GITHUB = "ghp_FAKEfake0123456789abcdefABCDEFghij";

const markers = (text: string) => text.match(MARKER_PATTERN) ?? [];

describe("secret scanner", () => {
  it("replaces each built-in shape by a marker that does not contain it", () => {
    for (const [secret, kind] of [
      [OPENAI, "api_key"],
      [AWS, "aws_key"],
      [JWT, "jwt"],
      [PEM, "private_key"],
      [GITHUB, "api_key"],
      [`Bearer abcdefABCDEF0123456789`, "bearer_token"],
    ] as const) {
      const { value, found } = scanner.text(`before ${secret} after`, "result");
      expect(value).not.toContain(secret);
      expect(value).toMatch(/^before \[redacted:[a-z_]+:[0-9a-f]{12}\] after$/);
      expect(found).toEqual([{ path: "result", kind, marker: markers(value)[0] }]);
    }
  });

  it("leaves ordinary prose and near misses alone, and returns the same object when nothing was found", () => {
    const input = { text: "ask sk-short, AKIA123, eyJ alone, a task-list, Bearer of news", n: 3 };
    const { value, found } = scanner.value(input, "result");
    expect(found).toEqual([]);
    expect(value).toBe(input);
  });

  it("gives the same value the same marker, other values and other keys other markers", () => {
    const a = scanner.text(OPENAI, "a").value;
    expect(scanner.text(`x ${OPENAI} y`, "b").value).toBe(`x ${a} y`);
    expect(scanner.text(`${OPENAI}X`, "c").value).not.toBe(a);
    expect(createSecretScanner({ key: new Uint8Array(32).fill(8) }).text(OPENAI, "d").value).not.toBe(a);
  });

  it("is idempotent: markers are never redacted again", () => {
    const once = scanner.value({ note: `${OPENAI} and ${AWS}` }, "r").value;
    const twice = scanner.value(once, "r");
    expect(twice.found).toEqual([]);
    expect(twice.value).toEqual(once);
  });

  it("merges overlapping shapes into one marker (a JWT inside Bearer, an AWS key inside a key block)", () => {
    const bearer = scanner.text(`Authorization: Bearer ${JWT}`, "h");
    expect(bearer.value).not.toContain("eyJ");
    expect(bearer.found).toHaveLength(1);
    const block = scanner.text(PEM, "k");
    expect(block.found).toEqual([expect.objectContaining({ kind: "private_key" })]);
    expect(block.value).not.toContain("AKIA");
    // A private key block that never ends is cut to the end of the text.
    expect(scanner.text(`x ${PEM.slice(0, 60)}`, "k").value).toMatch(/^x \[redacted:private_key:[0-9a-f]{12}\]$/);
  });

  it("walks nested objects and arrays, redacts secret-shaped keys and names paths without values", () => {
    const { value, found } = scanner.value(
      { a: [{ b: { c: `key=${AWS}` } }], [OPENAI]: "v", "odd key": JWT },
      "result.structuredContent",
    );
    const text = JSON.stringify(value);
    for (const secret of [AWS, OPENAI, JWT]) expect(text).not.toContain(secret);
    expect(found.map((entry) => [entry.path, entry.kind])).toEqual([
      ["result.structuredContent.a[0].b.c", "aws_key"],
      ["result.structuredContent.{key}", "api_key"],
      ['result.structuredContent["odd key"]', "jwt"],
    ]);
    expect(JSON.stringify(found)).not.toMatch(/sk-proj|AKIA|eyJ/);
  });

  it("redacts the whole value of a sensitive field at any depth, whatever its shape", () => {
    const { value, found } = scanner.value(
      { user: { password: "hunter2", pin: 1234 }, list: [{ password: { nested: true } }] },
      "arguments",
      ["password", "pin"],
    );
    expect(JSON.stringify(value)).not.toMatch(/hunter2|1234|nested/);
    expect(found.map((entry) => [entry.path, entry.kind])).toEqual([
      ["arguments.user.password", "sensitive"],
      ["arguments.user.pin", "sensitive"],
      ["arguments.list[0].password", "sensitive"],
    ]);
    // Same value, same marker: a repeated call still has one fingerprint.
    expect(scanner.value({ password: "hunter2" }, "a", ["password"]).value).toEqual({
      password: (value as { user: { password: string } }).user.password,
    });
  });

  it("keeps a __proto__ key an own property and never touches the prototype", () => {
    const input: unknown = JSON.parse(`{"__proto__": {"token": "${OPENAI}"}}`);
    const { value } = scanner.value(input, "r");
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value as object, "__proto__")).toBe(true);
    expect(JSON.stringify(value)).not.toContain(OPENAI);
  });

  it("handles unicode around and near secrets", () => {
    const { value } = scanner.text(`schlüssel→${OPENAI}🔑 «${AWS}» 日本語`, "t");
    expect(value).not.toContain(OPENAI);
    expect(value).not.toContain(AWS);
    expect(value.startsWith("schlüssel→[redacted:api_key:")).toBe(true);
    expect(value).toContain("🔑 «[redacted:aws_key:");
    // A lone surrogate beside a key does not stop the scan.
    expect(scanner.text(`\uD800${OPENAI}`, "t").value).not.toContain(OPENAI);
  });

  it("scans a huge string in linear time", () => {
    const huge = `${"a".repeat(2_000_000)} ${OPENAI} ${"-----BEGIN PRIVATE KEY-----".repeat(3)}${"b ".repeat(1_000_000)}`;
    const started = performance.now();
    const { value, found } = scanner.text(huge, "t");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(value).not.toContain(OPENAI);
    expect(found.map((entry) => entry.kind)).toEqual(["api_key", "private_key"]);
  });

  it("replaces a subtree nested deeper than it walks (fail closed)", () => {
    let deep: unknown = OPENAI;
    for (let level = 0; level < MAX_SCAN_DEPTH + 5; level += 1) deep = { d: deep };
    const { value, found } = scanner.value(deep, "r");
    expect(JSON.stringify(value)).not.toContain(OPENAI);
    expect(found).toEqual([expect.objectContaining({ kind: "unscanned" })]);
  });

  it("adds configured patterns and refuses bad ones", () => {
    const custom = createSecretScanner({ key: KEY, patterns: { internal_token: "\\bint_[A-Za-z0-9]{12,}" } });
    expect(custom.text("use int_ABCDEF123456789 now", "t").found).toEqual([
      expect.objectContaining({ kind: "internal_token" }),
    ]);
    expect(custom.text(OPENAI, "t").found).toHaveLength(1);
    expect(() => compilePatterns({ Bad: "x" })).toThrow(/kind/);
    expect(() => compilePatterns({ empty: "a*" })).toThrow(/empty/);
    expect(() => compilePatterns({ broken: "(" })).toThrow();
    expect(() => createSecretScanner({ key: new Uint8Array(4) })).toThrow(/16 bytes/);
  });

  it("describes redactions for the audit without values, capped but counted", () => {
    const found = Array.from({ length: 30 }, (_, index) => ({
      path: `r[${index}]`,
      kind: "api_key",
      marker: "[redacted:api_key:000000000000]",
    }));
    const detail = JSON.parse(redactionDetail("result", found)) as {
      where: string;
      count: number;
      redactions: unknown[];
    };
    expect(detail).toMatchObject({ where: "result", count: 30 });
    expect(detail.redactions).toHaveLength(20);
  });

  it("finds markers an earlier edge left, with their paths and kinds", () => {
    const redacted = scanner.value(
      { decisions: [{ type: "edit", edited_action: { args: { description: `use ${OPENAI}`, note: "plain" } } }] },
      "resume",
    ).value;
    expect(markersIn(redacted, "resume")).toEqual([
      {
        path: "resume.decisions[0].edited_action.args.description",
        kind: "api_key",
        marker: expect.stringMatching(MARKER_PATTERN),
      },
    ]);
    expect(markersIn({ a: "no markers" }, "resume")).toEqual([]);
  });

  it("derives one marker key per deployment secret, revealing nothing of it", () => {
    const secret = new Uint8Array(32).fill(9);
    const key = redactionKeyFrom(secret);
    expect(key).toEqual(redactionKeyFrom(new Uint8Array(32).fill(9)));
    expect(key).not.toEqual(redactionKeyFrom(new Uint8Array(32).fill(10)));
    expect(Buffer.from(key).toString("hex")).not.toContain(Buffer.from(secret).toString("hex"));
  });
});
