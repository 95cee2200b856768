/**
 * Runs the labelled retrieval set through the default (rules) planner's own
 * decision code, in process: `decide` proposes `search_notes`, the notes
 * server's search (tools/notes/corpus.ts, the same code the server runs)
 * answers as the asker, `decide` reads the notes it will cite or abstains.
 * No MCP transport, so 170 questions take a second; what the planner decides
 * is exactly what it decides in a run. The fixed workflow's choice (the same
 * retrieval: notes/question.ts `retrieveFor`) is recorded beside it.
 */

import path from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { cannotFind, notesQuestion, retrieveFor } from "../../src/domains/notes/question.js";
import { searchHits, type Hit } from "../../src/domains/notes/relevance.js";
import { decide } from "../../src/domains/rules-planner.js";
import type { PlannerInput } from "../../src/planners/planner.js";
import { notesRequest, READ_LIMIT } from "../../src/workflow/request.js";
import { RERANK_TOP } from "../../src/workflow/rerank.js";
import {
  buildSearchIndex,
  findPrincipal,
  loadCorpus,
  loadPrincipalDirectory,
  loadSynonyms,
  searchNotes,
  type Principal,
  type SearchIndex,
  type SynonymTable,
} from "../../tools/notes/corpus.js";
import type { LabelledQuestion } from "./questions.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CORPUS_PATH = path.join(ROOT, "eval", "fixtures", "notes.json");
export const SYNONYMS_PATH = path.join(ROOT, "tools", "notes", "data", "synonyms.json");
const PRINCIPALS_PATH = path.join(ROOT, "src", "domains", "dev-principals.json");

/** A ph110-only student: the dev directory has none, and wrong-course questions need one. */
const PIA: Principal = { user_id: "pia", tenant: "uni", role: "student", scopes: ["notes:read"], courses: ["ph110"] };

const TOOLS = [
  { name: "search_notes", description: "", parameters: {} },
  { name: "read_note", description: "", parameters: {} },
];

/** What the planner did with one question. */
export interface RetrievalRun {
  question: LabelledQuestion;
  /** The notes it read to answer from (and so cites), best first; empty when it did not answer. */
  cited: string[];
  /** How it ended: an answer from notes, an abstention, or needs_human (outside what the rules planner does). */
  ending: "answered" | "abstained" | "needs_human";
  /** The abstain message, when it abstained. */
  message?: string;
  /** The search hits the planner saw (empty when it never searched): the calibration sweeps re-decide on them. */
  hits: Hit[];
  /** The query the planner sent, when it searched. */
  query?: string;
  /** The notes the fixed workflow would hand to generate for the same question. */
  workflow: string[];
}

export interface Fixture {
  index: SearchIndex;
  principal: (user: string) => Principal;
}

/** The eval's corpus and principals, with the shipped synonym table (or another, for the ablation). */
export async function loadFixture(synonyms?: SynonymTable): Promise<Fixture> {
  const [corpus, directory, table] = await Promise.all([
    loadCorpus(CORPUS_PATH),
    loadPrincipalDirectory(PRINCIPALS_PATH),
    synonyms === undefined ? loadSynonyms(SYNONYMS_PATH) : Promise.resolve(synonyms),
  ]);
  const index = buildSearchIndex(corpus, table);
  return {
    index,
    principal: (user) => {
      const found = user === PIA.user_id ? PIA : findPrincipal(directory, user);
      if (!found) throw new Error(`retrieval suite: unknown asker ${user}`);
      return found;
    },
  };
}

const input = (request: string, messages: BaseMessage[], turn: number): PlannerInput => ({
  request,
  messages,
  tools: TOOLS,
  evidence: [],
  turn,
});

/** One question through `decide`, the search executed as the notes server would for the asker. */
export function runQuestion(fixture: Fixture, question: LabelledQuestion): RetrievalRun {
  const principal = fixture.principal(question.user);
  const messages: BaseMessage[] = [new HumanMessage(question.question)];
  const first = decide(input(question.question, messages, 1));
  const search = first.type === "tool_calls" ? first.calls.find((call) => call.name === "search_notes") : undefined;
  const workflowChoice = (hits: Hit[]) => {
    const retrieval = retrieveFor(notesRequest(question.question), hits, READ_LIMIT, question.question);
    return retrieval.type === "answer" ? retrieval.note_ids.slice(0, RERANK_TOP) : [];
  };
  if (!search) {
    const ending =
      first.type === "final" && !first.abstained
        ? "answered"
        : first.type === "needs_human"
          ? "needs_human"
          : "abstained";
    return { question, cited: [], ending, hits: [], workflow: [] };
  }
  const args = JSON.parse(search.raw_arguments) as { query: string; limit?: number };
  const result = searchNotes(fixture.index, principal, { query: args.query, limit: args.limit ?? 5 });
  messages.push(
    new AIMessage({ content: "", tool_calls: [{ id: search.call_id, name: "search_notes", args, type: "tool_call" }] }),
    new ToolMessage({
      tool_call_id: search.call_id,
      name: "search_notes",
      content: JSON.stringify(result),
      artifact: result,
    }),
  );
  const hits = searchHits(result);
  const second = decide(input(question.question, messages, 2));
  const base = { question, hits, query: args.query, workflow: workflowChoice(hits) };
  if (second.type === "tool_calls") {
    const cited = second.calls
      .filter((call) => call.name === "read_note")
      .map((call) => String((JSON.parse(call.raw_arguments) as { note_id: unknown }).note_id));
    return { ...base, cited, ending: "answered" };
  }
  if (second.type === "final")
    return second.abstained
      ? { ...base, cited: [], ending: "abstained", message: second.answer }
      : { ...base, cited: [], ending: "answered" };
  return { ...base, cited: [], ending: "needs_human" };
}

/** Every question, in order. */
export function runAll(fixture: Fixture, questions: readonly LabelledQuestion[]): RetrievalRun[] {
  return questions.map((question) => runQuestion(fixture, question));
}

/** The refusal text the planner gives for a question with these closest notes (for the report's examples). */
export const refusalFor = (request: string, closest: { note_id: string; title: string }[]) =>
  cannotFind(notesQuestion(request), closest).answer;
