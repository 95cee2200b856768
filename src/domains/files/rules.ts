/**
 * The rules planner's one branch for a file server (e.g. the filesystem MCP
 * server of `examples/third-party.config.json`): a request that asks to read
 * a file it names ("read welcome.txt", "show me notes.md") becomes one
 * `read_text_file` call with that name (the server resolves it inside its
 * folder and refuses anything outside), and the answer quotes what the
 * server returned. Only when `read_text_file` is offered; anything else
 * about files (writing, listing, moving) needs a model planner. Pure.
 */
import type { PlanOutcome } from "../../planners/planner.js";
import type { Proposal } from "../../policy/contracts.js";
import type { StudyObservation } from "../study/rules.js";

/** The tool this branch proposes. */
export const FILE_READER = "read_text_file";
/** How much of a file the answer quotes. */
const MAX_QUOTED_CHARS = 2_000;

const READ_VERB = /\b(?:read|show|display|print|cat|open|what(?:'s|\s+is)\s+in)\b/i;
const FILE_NAME = /(?<![\w./-])((?:[\w-]+\/)*[\w-]+\.(?:txt|md|csv|json|log))(?![\w/-])/i;

/** The file a request asks to read, or undefined when it asks for none. */
export function fileToRead(request: string): string | undefined {
  if (!READ_VERB.test(request)) return undefined;
  const name = FILE_NAME.exec(request)?.[1];
  // A name only: the server's folder is the root; ".." never reaches it.
  return name !== undefined && !name.split("/").includes("..") ? name : undefined;
}

function textOf(structured: unknown): string | undefined {
  if (typeof structured !== "object" || structured === null) return undefined;
  const content = (structured as Record<string, unknown>)["content"];
  return typeof content === "string" ? content : undefined;
}

/** The next step of a read request: the read, then the answer quoting it (or why it failed). */
export function decideFileRead(
  file: string,
  observations: readonly StudyObservation[],
  call: (name: string, args: Record<string, unknown>) => Proposal,
): PlanOutcome {
  const read = observations.filter((observation) => observation.tool === FILE_READER).at(-1);
  if (!read) return { type: "tool_calls", calls: [call(FILE_READER, { path: file })] };
  if (!read.ok)
    return {
      type: "final",
      answer: `I could not read ${file}: ${read.code ?? "error"}${read.message ? ` (${read.message})` : ""}.`,
      citations: [],
      abstained: true,
    };
  const text = textOf(read.structured);
  if (text === undefined)
    return {
      type: "final",
      answer: `${file} was read, but the server returned no text.`,
      citations: [],
      abstained: true,
    };
  const quoted =
    text.length > MAX_QUOTED_CHARS
      ? `${text.slice(0, MAX_QUOTED_CHARS)}… (cut at ${MAX_QUOTED_CHARS} characters)`
      : text;
  return { type: "final", answer: `${file} says:\n${quoted.trimEnd()}`, citations: [], abstained: false };
}
