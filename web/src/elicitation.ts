/**
 * A server's question to the run's owner during a tool call (elicitation):
 * read from the run's `custom` stream events (`{type: "elicitation"}`, and
 * `{type: "elicitation_closed"}` when it ends, `{type: "elicitation_completed"}`
 * when the server says a consented URL-mode question is done) or from
 * `GET /threads/{id}/elicitations` after a reload, and answered with
 * `POST /threads/{id}/elicitations/{elicitation_id}`.
 */
import { API_URL } from "./api";

export interface ElicitationField {
  type: "string" | "number" | "integer" | "boolean" | "array";
  title?: string;
  description?: string;
  format?: "email" | "uri" | "date" | "date-time";
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  enum?: string[];
  oneOf?: { const: string; title: string }[];
  items?: { enum?: string[]; anyOf?: { const: string; title: string }[] };
  default?: string | number | boolean | string[];
}

export interface Elicitation {
  type: "elicitation";
  elicitation_id: string;
  thread_id: string;
  server: string;
  tool: string;
  message: string;
  requested_schema: { type: "object"; properties: Record<string, ElicitationField>; required?: string[] };
  defaults: Record<string, unknown>;
  expires_at: string;
  /** `url`: the owner is asked to consent to open `url` (on `host`); there is no form. */
  mode?: "form" | "url";
  url?: string;
  host?: string;
  /** The page's own: a URL question the owner accepted stays shown until the server says it is complete. */
  state?: "accepted" | "completed";
}

export type ElicitationAnswer =
  | { action: "accept"; content: Record<string, unknown> }
  /** URL mode: consent, with no content. */
  | { action: "accept"; content?: undefined }
  | { action: "decline" }
  | { action: "cancel" };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The question a custom event carries, if it is one. */
export function elicitationOf(data: unknown): Elicitation | null {
  if (!isRecord(data) || data.type !== "elicitation") return null;
  if (typeof data.elicitation_id !== "string" || typeof data.message !== "string") return null;
  const schema = data.requested_schema;
  if (!isRecord(schema) || !isRecord(schema.properties)) return null;
  return data as unknown as Elicitation;
}

/** The id of the question a custom event closes, if it closes one. */
export function closedElicitationOf(data: unknown): string | null {
  return isRecord(data) && data.type === "elicitation_closed" && typeof data.elicitation_id === "string"
    ? data.elicitation_id
    : null;
}

/** The id of the URL-mode question a custom event says is complete, if it says so. */
export function completedElicitationOf(data: unknown): string | null {
  return isRecord(data) && data.type === "elicitation_completed" && typeof data.elicitation_id === "string"
    ? data.elicitation_id
    : null;
}

/** The outcome a closing event carries (`accept`, `decline`, …). */
export function closedOutcomeOf(data: unknown): string | null {
  return isRecord(data) && typeof data.outcome === "string" ? data.outcome : null;
}

/** Why the server refused an answer: its code and the fields it named. */
export interface AnswerRefusal {
  code: string;
  problems: { field: string; problem: string }[];
}

export async function fetchOpenElicitations(token: string, threadId: string): Promise<Elicitation[]> {
  const response = await fetch(`${API_URL}/threads/${encodeURIComponent(threadId)}/elicitations`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) return [];
  const body = (await response.json()) as { elicitations?: unknown[] };
  return (body.elicitations ?? []).map(elicitationOf).filter((item): item is Elicitation => item !== null);
}

/** Sends the answer; resolves null when taken, else the refusal. */
export async function answerElicitation(
  token: string,
  question: Elicitation,
  answer: ElicitationAnswer,
): Promise<AnswerRefusal | null> {
  const response = await fetch(
    `${API_URL}/threads/${encodeURIComponent(question.thread_id)}/elicitations/${encodeURIComponent(question.elicitation_id)}`,
    {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(answer),
    },
  );
  if (response.ok) return null;
  const body = (await response.json().catch(() => ({}))) as { error?: unknown; problems?: unknown };
  return {
    code: typeof body.error === "string" ? body.error : `http_${response.status}`,
    problems: Array.isArray(body.problems) ? (body.problems as AnswerRefusal["problems"]) : [],
  };
}
