/**
 * Answering a server's question (elicitation) during a call of a run:
 *
 *   GET  /threads/{thread_id}/elicitations                   → { elicitations: [open questions] }
 *   POST /threads/{thread_id}/elicitations/{elicitation_id}  body: {"action": "accept", "content": {...}}
 *                                                                 | {"action": "decline"} | {"action": "cancel"}
 *                                                            (URL mode: {"action": "accept"} is consent, no content)
 *                                                            → { elicitation_id, status }
 *
 * Only the run's owner answers (the principal of the verified token, never a
 * body claim): anyone else of the tenant, a reviewer included, gets 403
 * `elicitation_forbidden`; a question of another tenant looks like none
 * (404). The content is validated strictly against the requested form
 * (422 `invalid_elicitation_answer`, naming fields and problems, never
 * values); a question already answered, timed out or withdrawn is 409
 * `elicitation_closed`. The answer settles the Postgres row, which the
 * instance holding the call reads (src/elicitation/broker.ts).
 */
import type { Hono } from "hono";
import { z } from "zod";
import type { ElicitationRow, ElicitationStore } from "../../stores/elicitation-store.js";
import { validateAnswer } from "../../elicitation/schema.js";
import { errorBody, notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { ApiError } from "../../errors.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const AnswerSchema = z.discriminatedUnion("action", [
  // `content` is the form's answer; a URL-mode question's consent has none.
  z.object({ action: z.literal("accept"), content: z.unknown().optional() }).strict(),
  z.object({ action: z.literal("decline") }).strict(),
  z.object({ action: z.literal("cancel") }).strict(),
]);

/** What a client sees of an open question (the stream event's fields). */
function view(row: ElicitationRow) {
  return {
    type: "elicitation" as const,
    elicitation_id: row.elicitation_id,
    thread_id: row.thread_id,
    call_id: row.call_id,
    server: row.server,
    tool: row.tool,
    message: row.message,
    requested_schema: row.requested_schema,
    mode: row.mode,
    ...(row.url === null ? {} : { url: row.url, host: new URL(row.url).host }),
    defaults: Object.fromEntries(
      Object.entries(row.requested_schema.properties).flatMap(([name, field]) =>
        field.default === undefined ? [] : [[name, field.default]],
      ),
    ),
    expires_at: row.expires_at,
  };
}

export function registerElicitationRoutes(app: Hono<Env>, context: RouteContext, store: ElicitationStore): void {
  const { principalOf, threadParam, body } = context;

  app.get("/threads/:thread_id/elicitations", async (c) => {
    const thread = await context.ownedThread(c);
    const open = await store.pending(thread.thread_id);
    return c.json({ elicitations: open.map(view) });
  });

  app.post("/threads/:thread_id/elicitations/:elicitation_id", async (c) => {
    const caller = principalOf(c);
    const threadId = threadParam(c);
    const elicitationId = c.req.param("elicitation_id");
    if (!UUID.test(elicitationId)) throw notFound("elicitation");
    const row = await store.get(elicitationId.toLowerCase());
    if (!row || row.thread_id !== threadId || row.tenant !== caller.tenant) throw notFound("elicitation");
    if (row.owner !== caller.user_id)
      throw new ApiError("elicitation_forbidden", "only the run's owner may answer its questions");
    const parsed = AnswerSchema.safeParse(await body(c));
    if (!parsed.success)
      throw new ApiError(
        "invalid_request",
        'the body must be {"action": "accept", "content": {...}}, decline or cancel',
      );
    if (row.status !== "pending" || Date.parse(row.expires_at) <= Date.now())
      throw new ApiError("elicitation_closed", "the question is no longer open");
    let content = null;
    if (row.mode === "url" && parsed.data.action === "accept" && parsed.data.content !== undefined)
      throw new ApiError("invalid_request", 'consent to open a URL is {"action": "accept"} with no content');
    if (row.mode === "form" && parsed.data.action === "accept") {
      if (parsed.data.content === undefined)
        throw new ApiError("invalid_request", 'the body must be {"action": "accept", "content": {...}}');
      const checked = validateAnswer(row.requested_schema, parsed.data.content);
      if (!checked.ok)
        return c.json(
          {
            ...errorBody("invalid_elicitation_answer", "the answer does not fit the requested form"),
            problems: checked.problems,
          },
          422,
        );
      content = checked.content;
    }
    const settled = await store.answer(row.elicitation_id, { status: parsed.data.action, content, by: caller.user_id });
    if (!settled) throw new ApiError("elicitation_closed", "the question is no longer open");
    return c.json({ elicitation_id: row.elicitation_id, status: parsed.data.action });
  });
}
