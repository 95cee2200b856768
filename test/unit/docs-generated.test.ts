/**
 * The generated reference pages are up to date: regenerated in memory from their sources, they equal the
 * committed files. When this fails, run `npm run docs` and commit the result.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BLOCK_END, BLOCK_START, configurationPage, generatedDocs } from "../../scripts/docs.js";
import { ENV_DOCS } from "../../src/env-docs.js";
import { EnvSchema } from "../../src/env.js";
import { API_ERROR_MEANINGS, TOOL_ERROR_MEANINGS } from "../../src/error-codes.js";
import { TOOL_ERROR_CODES } from "../../src/errors.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("generated reference pages", () => {
  const pages = generatedDocs(ROOT);

  it("are not stale (run `npm run docs`)", () => {
    for (const [file, text] of Object.entries(pages)) {
      expect({ file, text: readFileSync(path.join(ROOT, file), "utf8") }).toEqual({ file, text });
    }
  });

  it("cover every environment variable and every error code", () => {
    expect(Object.keys(ENV_DOCS).sort()).toEqual(Object.keys(EnvSchema.shape).sort());
    for (const name of Object.keys(EnvSchema.shape))
      expect(pages["docs/reference/environment.md"]).toContain(`\`${name}\``);
    expect(Object.keys(TOOL_ERROR_MEANINGS).sort()).toEqual([...TOOL_ERROR_CODES].sort());
    for (const code of [...TOOL_ERROR_CODES, ...Object.keys(API_ERROR_MEANINGS)]) {
      expect(pages["docs/reference/errors.md"]).toContain(`### \`${code}\``);
    }
    expect(pages["docs/reference/errors.md"]).toContain("HTTP 429. ");
  });

  it("replace only the generated block of the configuration page", () => {
    const page = `# Configuration\n\nhand text\n\n${BLOCK_START}\nold\n${BLOCK_END}\n\nmore hand text\n`;
    const next = configurationPage(page);
    expect(next.startsWith("# Configuration\n\nhand text\n\n")).toBe(true);
    expect(next.endsWith(`${BLOCK_END}\n\nmore hand text\n`)).toBe(true);
    expect(next).not.toContain("\nold\n");
    expect(next).toContain("| `servers` |");
  });
});
