/**
 * Just enough Markdown for the docs tests: headings and their GitHub anchors, and the links of a page,
 * both outside code fences and inline code.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** GitHub's anchor for a heading: its text lower-cased, markup and punctuation dropped, spaces as hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, "").replaceAll(" ", "-");
}

/** The page's lines outside fenced code blocks, with their line numbers. */
export function proseLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line, number: index + 1 });
  });
  return out;
}

/** Every anchor a page offers: its headings (GitHub's duplicate suffixes included) and explicit `id`/`name`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? "");
  }
  return anchors;
}

const withoutInlineCode = (line: string) => line.replace(/(`+)[^`]*?\1/g, "");

/** Link and image targets outside code: `[text](target)`, `![alt](target)`, `src="target"`, `href="target"`. */
export function linksOf(text: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  for (const { line, number } of proseLines(text)) {
    const prose = withoutInlineCode(line);
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1] ?? "", line: number });
    }
    for (const match of prose.matchAll(/\b(?:src|href)="([^"]+)"/g))
      links.push({ target: match[1] ?? "", line: number });
  }
  return links;
}

/** Bare or linked URLs with a scheme, outside code. */
export function externalUrlsOf(text: string): string[] {
  return proseLines(text).flatMap(({ line }) =>
    [...withoutInlineCode(line).matchAll(/\b[a-z][a-z0-9+.-]*:\/\/[^\s)>"]+/gi)].map((m) => m[0]),
  );
}

/** README.md and every Markdown file under docs/, as paths relative to root. */
export function documentationFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) return walk(rel);
      return entry.name.endsWith(".md") ? [rel] : [];
    });
  return ["README.md", ...walk("docs")];
}

export const readText = (root: string, file: string) => readFileSync(path.join(root, file), "utf8");
