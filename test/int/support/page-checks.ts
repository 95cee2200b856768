/**
 * Checks on what a person sees in the page (issue 37): the rendered text
 * (`document.body.innerText`) holds no ISO timestamp, raw JSON object, enum
 * value or raw millisecond count; nothing is wider than the viewport; axe-core
 * (WCAG 2.1 A/AA) finds no serious or critical violation.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { REPO_ROOT } from "../../../src/env.js";

/** Words of the code, not of a person: enum values, tool names, termination codes. */
const ENUM_VALUES = [
  "write_reversible",
  "write_irreversible",
  "read_only",
  "final_answer",
  "needs_human",
  "waiting_approval",
  "interrupted",
  "idle",
  "approval_expired",
  "approval_rejected",
  "budget_exhausted",
  "missing_start",
  "review_expired",
  "create_study_event",
  "search_notes",
  "read_note",
];

const LEAKS: [string, RegExp][] = [
  ["an ISO timestamp", /\d{4}-\d\d-\d\dT\d\d:/],
  ["a raw JSON object", /\{"[^"]*":/],
  ["an enum value", new RegExp(`\\b(${ENUM_VALUES.join("|")})\\b`)],
  ["a raw millisecond count", /\d+ ?ms\b/],
];

/** What of the code shows through in the page's rendered text: "<kind>: <the match in its line>". */
export async function leaksIn(page: Page): Promise<string[]> {
  // biome-ignore lint/performance/useDomNodeTextContent: what a person sees is the rendered text (closed details left out).
  const text = await page.evaluate(() => document.body.innerText);
  const found: string[] = [];
  for (const [kind, pattern] of LEAKS) {
    const match = pattern.exec(text);
    if (!match) continue;
    const line = text.slice(0, match.index).lastIndexOf("\n") + 1;
    found.push(`${kind}: ${text.slice(line, text.indexOf("\n", match.index) >>> 0).slice(0, 160)}`);
  }
  return found;
}

/** Elements wider than the viewport (and the page's own scroll width when it scrolls sideways). */
export async function overflowIn(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const found: string[] = [];
    if (document.documentElement.scrollWidth > width)
      found.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    for (const element of Array.from(document.body.querySelectorAll("*"))) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      if (box.right > width + 1) {
        const name = `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).split(" ").join(".")}` : ""}`;
        found.push(`${name} ends at ${Math.round(box.right)} px: ${(element.textContent ?? "").slice(0, 60)}`);
      }
    }
    return found.slice(0, 10);
  });
}

const AXE = path.join(REPO_ROOT, "node_modules", "axe-core", "axe.min.js");

/** Serious and critical WCAG 2.1 A/AA violations axe-core finds in the page: "<rule>: <targets>". */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (...args: unknown[]) => Promise<unknown> } }).axe;
    const result = (await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    })) as { violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] };
    return result.violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map(
        (violation) =>
          `${violation.id}: ${violation.nodes
            .slice(0, 3)
            .map((node) => JSON.stringify(node.target))
            .join(", ")}`,
      );
  });
}

/** Regions that scroll on their own but a keyboard cannot reach (no tabindex=0 with an aria-label). */
export async function unreachableScrollRegions(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.body.querySelectorAll("*"))
      .filter((element) => {
        const style = getComputedStyle(element);
        const scrolls = (overflow: string) => overflow === "auto" || overflow === "scroll";
        const vertical = scrolls(style.overflowY) && element.scrollHeight > element.clientHeight + 1;
        const sideways = scrolls(style.overflowX) && element.scrollWidth > element.clientWidth + 1;
        if (!vertical && !sideways) return false;
        // A text box scrolls its own text and is reached by Tab anyway.
        if (element instanceof HTMLTextAreaElement || element instanceof HTMLInputElement) return false;
        return !(element.getAttribute("tabindex") === "0" && element.getAttribute("aria-label"));
      })
      .map((element) => `${element.tagName.toLowerCase()}.${String(element.className)}`),
  );
}
