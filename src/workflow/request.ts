/**
 * What the fixed workflow reads from a request, with the domains' own
 * parsers: a study request (plans, sessions, divisions: the study domain's
 * parser), else a notes question, whose search query is the rules planner's
 * and whose explicitly named notes (`cs301.self-attention`) are read as asked.
 * Pure.
 */
import { randomUUID } from "node:crypto";
import { searchQuery } from "../domains/rules-planner.js";
import { parseStudyRequest, type StudyParse } from "../domains/study/parse.js";
import type { Proposal } from "../planners/planner.js";

/** Hits a search returns; the relevant ones are all read, then reranked. */
export const SEARCH_LIMIT = 5;
/** Notes read for one question at most (named ones first, then relevant hits). */
export const READ_LIMIT = 5;

/** A course note id as the notes server names them: `<course>.<slug>`. */
const NOTE_ID = /\b[a-z]{2,8}[0-9]{3}\.[a-z0-9]+(?:-[a-z0-9]+)*\b/g;

export type WorkflowRequest = { kind: "study"; parse: Exclude<StudyParse, { type: "none" }> } | { kind: "notes"; query: string; named: string[] };

/** Which of the workflow's two sequences a request takes. */
export function workflowRequest(request: string): WorkflowRequest {
  const study = parseStudyRequest(request);
  if (study.type !== "none") return { kind: "study", parse: study };
  return { kind: "notes", query: searchQuery(request), named: [...new Set(request.toLowerCase().match(NOTE_ID) ?? [])].slice(0, READ_LIMIT) };
}

/** A proposal made by the workflow's code: a fresh call id and canonical argument text. */
export function propose(name: string, args: Record<string, unknown>): Proposal {
  return { call_id: `call_wf_${randomUUID().replace(/-/g, "").slice(0, 20)}`, name, raw_arguments: JSON.stringify(args) };
}
