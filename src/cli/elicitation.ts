/**
 * A server's question during a call of a run the CLI is waiting for
 * (elicitation), at the terminal: while `npm run chat` joins a run on the
 * server it polls `GET /threads/{id}/elicitations`; each open question is
 * printed as a card (the server's message, the fields with their types and
 * defaults, the route that answers it) and, at a terminal, asked field by
 * field and sent to `POST /threads/{id}/elicitations/{elicitation_id}`. A
 * refused answer prints the fields the server named and is asked again.
 *
 * A URL-mode question (the server asks the user to open a page) prints the
 * server, its message, the host and the full URL, and asks for explicit
 * consent (y/N, anything but yes declines). The CLI never opens or fetches
 * the URL: it prints it for the user to open.
 */
import type { FieldSchema, RequestedSchema } from "../elicitation/schema.js";
import type { ReviewIO } from "./review.js";

export interface OpenElicitation {
  elicitation_id: string;
  thread_id: string;
  server: string;
  tool: string;
  message: string;
  requested_schema: RequestedSchema;
  defaults: Record<string, unknown>;
  expires_at: string;
  /** `url`: consent to open `url` (on `host`); no form. */
  mode?: "form" | "url";
  url?: string;
  host?: string;
}

export type ElicitationReply =
  | { action: "accept"; content: Record<string, unknown> }
  /** URL mode: consent, no content. */
  | { action: "accept"; content?: undefined }
  | { action: "decline" }
  | { action: "cancel" };

function describeField(name: string, field: FieldSchema, required: boolean): string {
  const choices = field.enum ?? field.oneOf?.map((option) => option.const) ?? field.items?.enum;
  const kind = choices ? `one of ${choices.join(" | ")}` : `${field.type}${field.format ? `, ${field.format}` : ""}`;
  const preset = field.default === undefined ? "" : `, default ${JSON.stringify(field.default)}`;
  return `    ${field.title ?? name} (${name}: ${kind}${required ? ", required" : ""}${preset})`;
}

/** The question as the terminal shows it. */
export function elicitationCard(question: OpenElicitation): string {
  if (question.mode === "url") return urlCard(question);
  const required = new Set(question.requested_schema.required ?? []);
  return [
    `The ${question.server} server asks (during ${question.tool}; only you can answer; open until ${question.expires_at}):`,
    `  ${question.message}`,
    "  fields:",
    ...Object.entries(question.requested_schema.properties).map(([name, field]) =>
      describeField(name, field, required.has(name)),
    ),
    `  answer: POST /threads/${question.thread_id}/elicitations/${question.elicitation_id} ` +
      '{"action": "accept", "content": {…}} | {"action": "decline"} | {"action": "cancel"}',
  ].join("\n");
}

function urlCard(question: OpenElicitation): string {
  const route = `POST /threads/${question.thread_id}/elicitations/${question.elicitation_id}`;
  const when = `during ${question.tool}; only you can answer; open until ${question.expires_at}`;
  return [
    `The ${question.server} server asks you to open a page (${when}):`,
    `  ${question.message}`,
    `  host: ${question.host ?? ""}`,
    `  url:  ${question.url ?? ""}`,
    `  answer: ${route} {"action": "accept"} (you consent to open it) | {"action": "decline"}`,
  ].join("\n");
}

/** Asks for consent to open the URL: only an explicit yes accepts; the URL is printed, never opened here. */
async function askUrlConsent(question: OpenElicitation, io: ReviewIO): Promise<ElicitationReply | undefined> {
  io.write(`  Open ${question.host ?? "the page"} yourself? Consent (y/N): `);
  const choice = (await io.readLine())?.trim().toLowerCase();
  if (choice === undefined) return undefined;
  if (choice !== "y" && choice !== "yes") return { action: "decline" };
  io.write(`  Open this URL in your browser (the agent never sees it):\n  ${question.url ?? ""}\n`);
  return { action: "accept" };
}

/** A typed value from what was typed; empty means "leave it out" (the default applies). */
function typedValue(field: FieldSchema, text: string): unknown {
  if (field.type === "number" || field.type === "integer") return Number(text);
  if (field.type === "boolean") return /^(y|yes|true)$/i.test(text);
  if (field.type === "array")
    return text
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean);
  return text;
}

/** Asks answer / decline / cancel, then each field; undefined when input ends. */
export async function askElicitation(question: OpenElicitation, io: ReviewIO): Promise<ElicitationReply | undefined> {
  if (question.mode === "url") return askUrlConsent(question, io);
  for (;;) {
    io.write("  (a)nswer, (d)ecline or (c)ancel? ");
    const choice = (await io.readLine())?.trim().toLowerCase();
    if (choice === undefined) return undefined;
    if (choice === "d" || choice === "decline") return { action: "decline" };
    if (choice === "c" || choice === "cancel") return { action: "cancel" };
    if (choice === "a" || choice === "answer") break;
    io.write("  answer a, d or c\n");
  }
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(question.requested_schema.properties)) {
    const preset = question.defaults[name];
    io.write(`  ${field.title ?? name}${preset === undefined ? "" : ` [${JSON.stringify(preset)}]`}: `);
    const line = await io.readLine();
    if (line === undefined) return undefined;
    const text = line.trim();
    if (text !== "") content[name] = typedValue(field, text);
  }
  return { action: "accept", content };
}
