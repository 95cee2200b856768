/**
 * The end of a per-user authorization (OAuth `authorization_code`, issue 25):
 *
 *   GET  /oauth/callback?code&state   (no token) the page the authorization server
 *                                     sends the owner's browser back to; it
 *                                     posts the code with the signed-in page's token
 *   POST /oauth/callback              body: {"code": "...", "state": "...", "iss"?: "..."}
 *                                     → { server, thread_id, run_id | null,
 *                                         resumed: [{ thread_id, run_id }] }
 *
 * A browser redirect carries no bearer token, so the page takes the chat
 * page's token from this tab's sessionStorage (the "Connect" card opens the
 * authorization in a tab that inherits it) and POSTs; API clients POST
 * directly. Only the owner the state was sealed to may complete it (403
 * `authorization_forbidden`, and the state stays good for the owner); a
 * state Warrant did not issue is 400 `invalid_state`, an old one 400
 * `expired_state`, a code the authorization server refuses 400
 * `authorization_failed` (so is a response whose `iss` names another
 * authorization server, RFC 9207: its code is not used). The tokens are stored sealed for the owner; then
 * every run of the owner paused on that server (the thread the state names
 * first, then each other interrupted thread of the owner whose pause asks
 * for it) is resumed as the owner, through the same path as a client's
 * resume, and each looks at the token store itself (human_review). An owner
 * may have several links out for one server (two paused threads): each has
 * its own state and verifier, and any one of them connects all.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { ownerOf } from "../runs/types.js";
import type { ToolHost } from "../../mcp/tool-host.js";
import type { Owner, ThreadRow } from "../../stores/thread-rows.js";
import type { Env, RouteContext } from "../context.js";
import { startRunAs } from "../runs/start.js";
import { isApiError, ApiError } from "../../errors.js";

const MAX_PARAM_CHARS = 2_048;
const Param = z
  .string()
  .min(1)
  .max(MAX_PARAM_CHARS)
  .regex(/^[\x21-\x7e]+$/, "printable ASCII only");
/** `iss`: the authorization server's name on the redirect (RFC 9207), passed on when the redirect had one. */
export const CallbackSchema = z.object({ code: Param, state: Param, iss: Param.optional() }).strict();
/** At most this many other paused threads of the owner are looked at and resumed by one callback. */
const MAX_RESUMED = 50;
const PendingConnectSchema = z.object({ connect: z.array(z.object({ server: z.string() })).nullish() });

const PAGE_SCRIPT = `
const params = new URLSearchParams(location.search);
const show = (text) => { document.getElementById("status").textContent = text; };
const token = sessionStorage.getItem("warrant.token");
// The authorization server's name (RFC 9207) goes along when the redirect had one.
function callbackBody() {
  const body = { code: params.get("code") ?? "", state: params.get("state") ?? "" };
  if (params.get("iss")) body.iss = params.get("iss");
  return body;
}
if (params.get("error")) show("The authorization was not given (" + params.get("error").slice(0, 80) + "). Ask again from the chat.");
else if (!token) show("Sign in to the chat page in this tab first, then use the Connect link again.");
else fetch("/oauth/callback", {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + token },
  body: JSON.stringify(callbackBody()),
}).then(async (response) => {
  const body = await response.json().catch(() => ({}));
  if (!response.ok) return show("Not connected: " + (body.message ?? response.status));
  show("Connected " + body.server + ". Your run goes on; you can close this tab.");
  history.replaceState(null, "", "/oauth/callback");
  if (window.opener) window.opener.postMessage({ type: "warrant.connected", server: body.server }, location.origin);
});
`;

const PAGE = [
  "<!doctype html><html><head><meta charset='utf-8'><title>Warrant: connecting</title>",
  "<meta name='referrer' content='no-referrer'></head>",
  "<body><p id='status'>Connecting…</p><script src='/oauth/callback.js'></script></body></html>",
].join("");

/** The page and its script: public, like the chat page, and they carry no data. */
export function registerOAuthCallbackPage(app: Hono<Env>): void {
  app.get("/oauth/callback", (c) => {
    c.header("Cache-Control", "no-store");
    c.header("Referrer-Policy", "no-referrer");
    return c.html(PAGE);
  });
  app.get("/oauth/callback.js", (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    return c.body(PAGE_SCRIPT);
  });
}

export function registerOAuthCallbackRoutes(app: Hono<Env>, context: RouteContext, tools: () => Promise<ToolHost>) {
  app.post("/oauth/callback", async (c) => {
    const principal = context.principalOf(c);
    const parsed = CallbackSchema.safeParse(await context.body(c));
    if (!parsed.success)
      throw new ApiError(
        "invalid_request",
        'the body must be {"code": "...", "state": "..."} and the redirect\'s "iss" when it had one (printable, at most 2048 characters)',
      );
    const host = await tools();
    if (!host.completeAuthorization) throw new ApiError("invalid_state", "this deployment asks for no authorizations");
    const done = await host.completeAuthorization(parsed.data.state, parsed.data.code, principal, parsed.data.iss);
    if (!done.ok) throw new ApiError(done.code, done.message);
    const { server, thread_id } = done.binding;
    const owner = ownerOf(principal);
    const resume = async (thread: ThreadRow): Promise<string | null> => {
      // Resumed as the owner; human_review checks the token store, not this value.
      const started = await startRunAs(
        context,
        principal,
        thread,
        { assistant_id: thread.graph_id ?? "agent", command: { resume: { authorized: [server] } } },
        {
          delivery: "background",
        },
      ).catch((error: unknown) => {
        // Another resume got there first (two tabs, two callbacks): the run goes on without this one.
        if (isApiError(error) && error.status === 409) return undefined;
        throw error;
      });
      return started?.run.run_id ?? null;
    };
    const thread = await context.store.get(owner, thread_id);
    const runId = thread ? await resume(thread) : null;
    const resumed: { thread_id: string; run_id: string | null }[] = [];
    for (const other of await waitingOn(context, owner, server, thread_id))
      resumed.push({ thread_id: other.thread_id, run_id: await resume(other) });
    return c.json({ server, thread_id, run_id: runId, resumed });
  });
}

/** The owner's other threads paused for an authorization of `server` (their interrupt asks for it). */
async function waitingOn(context: RouteContext, owner: Owner, server: string, except: string): Promise<ThreadRow[]> {
  const interrupted = await context.store.interruptedThreads(owner.tenant, {
    owner: owner.user_id,
    limit: MAX_RESUMED,
  });
  const waiting: ThreadRow[] = [];
  for (const thread of interrupted) {
    if (thread.thread_id === except) continue;
    const snapshot = await context.snapshotOf(thread.thread_id);
    const pending = PendingConnectSchema.safeParse(snapshot.values);
    if (pending.success && pending.data.connect?.some((connection) => connection.server === server))
      waiting.push(thread);
  }
  return waiting;
}
