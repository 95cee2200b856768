/**
 * Every relative link and anchor in README.md and docs/ resolves (GitHub's anchor rules), and the README
 * never points outside the repository.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf, documentationFiles, externalUrlsOf, githubSlug, linksOf, readText } from "../support/markdown.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The broken links of one page, as `file:line target`. */
function brokenLinks(root: string, file: string, text: string): string[] {
  const broken: string[] = [];
  for (const { target, line } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [filePart = "", anchor] = target.split("#", 2);
    const resolved =
      filePart === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(filePart)));
    const where = `${file}:${line} ${target}`;
    if (filePart !== "" && (resolved.startsWith("..") || !existsSync(path.join(root, resolved)))) {
      broken.push(where);
      continue;
    }
    if (anchor === undefined) continue;
    if (!resolved.endsWith(".md") || (filePart !== "" && statSync(path.join(root, resolved)).isDirectory())) {
      broken.push(where);
      continue;
    }
    const anchors = anchorsOf(resolved === file ? text : readText(root, resolved));
    if (!anchors.has(decodeURIComponent(anchor))) broken.push(where);
  }
  return broken;
}

describe("documentation links", () => {
  const files = documentationFiles(ROOT);

  it("finds the README and the docs pages", () => {
    expect(files).toContain("README.md");
    expect(files.filter((f) => f.startsWith("docs/")).length).toBeGreaterThanOrEqual(15);
  });

  it("every relative link and anchor resolves", () => {
    const broken = files.flatMap((file) => brokenLinks(ROOT, file, readText(ROOT, file)));
    expect(broken).toEqual([]);
  });

  it("the README never links outside the repository", () => {
    expect(externalUrlsOf(readText(ROOT, "README.md"))).toEqual([]);
    const absolute = linksOf(readText(ROOT, "README.md")).filter(({ target }) =>
      /^([a-z][a-z0-9+.-]*:|\/)/i.test(target),
    );
    expect(absolute).toEqual([]);
  });
});

describe("the link checker itself", () => {
  const page = (text: string) => brokenLinks(ROOT, "docs/guides/x.md", text);

  it("slugs as GitHub does", () => {
    expect(githubSlug("The API (`npm start`)")).toBe("the-api-npm-start");
    expect(githubSlug("One run's timeline (`npm run trace`)")).toBe("one-runs-timeline-npm-run-trace");
    expect(githubSlug("Security: what a deployment must set")).toBe("security-what-a-deployment-must-set");
    expect(githubSlug("`outcome_unknown`")).toBe("outcome_unknown");
    expect(githubSlug("Model cost: the prompt cache")).toBe("model-cost-the-prompt-cache");
  });

  it("numbers duplicate headings", () => {
    expect([...anchorsOf("# A\n## Notes\n## Notes\n")]).toEqual(["a", "notes", "notes-1"]);
  });

  it("catches a missing file, a missing anchor, a link out of the repository", () => {
    expect(page("[x](nope.md)")).toHaveLength(1);
    expect(page("[x](quick-start.md#no-such-heading)")).toHaveLength(1);
    expect(page("[x](#nowhere)")).toHaveLength(1);
    expect(page("[x](../../../etc/passwd)")).toHaveLength(1);
    expect(page('<img src="../screenshots/missing.png">')).toHaveLength(1);
    expect(page("[x](../../src/env.ts#anchor)")).toHaveLength(1);
  });

  it("accepts a good link and ignores code", () => {
    expect(page("[x](quick-start.md#quick-start) [y](../../src/env.ts) [z](https://example.com)")).toEqual([]);
    expect(page("# Here\n[x](#here)\n`[y](nope.md)`\n```\n[z](nope.md)\n```")).toEqual([]);
  });

  it("sees external URLs in prose, not in code", () => {
    expect(externalUrlsOf("open http://a.example/ now")).toEqual(["http://a.example/"]);
    expect(externalUrlsOf("`http://a.example`\n```\nhttps://b.example\n```")).toEqual([]);
  });
});
