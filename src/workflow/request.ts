/**
 * What the fixed workflow reads from a request, with the domains' own
 * parsers: a study request (plans, sessions, divisions: the study domain's
 * parser), a claim to investigate (it names a case id: the CaseOps domain's
 * sequence), else a notes question, read as the rules planner reads it
 * (query, named course, topic), whose explicitly named notes
 * (`cs301.self-attention`) are read as asked.
 * Pure.
 */
import { randomUUID } from "node:crypto";
import { CASE_ID } from "../domains/caseops/rules.js";
import { notesQuestion, type NotesQuestion } from "../domains/notes/question.js";
import { parseStudyRequest, type StudyParse } from "../domains/study/parse.js";
import type { StudyClock } from "../domains/study/relative.js";
import type { Proposal } from "../policy/contracts.js";

/** Hits a search returns; the relevant ones are all read, then reranked. */
export const SEARCH_LIMIT = 5;
/** Notes read for one question at most (named ones first, then relevant hits). */
export const READ_LIMIT = 5;

/** A course note id as the notes server names them: `<course>.<slug>`. */
const NOTE_ID = /\b[a-z]{2,8}[0-9]{3}\.[a-z0-9]+(?:-[a-z0-9]+)*\b/g;

export type NotesRequest = { kind: "notes"; named: string[] } & NotesQuestion;
export type WorkflowRequest =
  | { kind: "case"; caseId: string }
  | { kind: "study"; parse: Exclude<StudyParse, { type: "none" }> }
  | NotesRequest;

/** The request read as a notes question (what the notes steps use, whatever its kind). */
export function notesRequest(request: string): NotesRequest {
  return {
    kind: "notes",
    ...notesQuestion(request),
    named: [...new Set(request.toLowerCase().match(NOTE_ID) ?? [])].slice(0, READ_LIMIT),
  };
}

/**
 * Which of the workflow's sequences a request takes; a case id wins, as in
 * the rules planner. `clock` (the run's study profile) resolves relative days
 * as the rules planner does; which sequence is taken does not depend on it.
 */
export function workflowRequest(request: string, clock?: StudyClock): WorkflowRequest {
  const caseId = CASE_ID.exec(request)?.[0];
  if (caseId !== undefined) return { kind: "case", caseId };
  const study = parseStudyRequest(request, clock);
  if (study.type !== "none") return { kind: "study", parse: study };
  return notesRequest(request);
}

/** A proposal made by the workflow's code: a fresh call id and canonical argument text. */
export function propose(name: string, args: Record<string, unknown>): Proposal {
  return {
    call_id: `call_wf_${randomUUID().replace(/-/g, "").slice(0, 20)}`,
    name,
    raw_arguments: JSON.stringify(args),
  };
}
