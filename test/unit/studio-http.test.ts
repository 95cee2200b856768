/**
 * `npm run dev`'s HTTP app (src/server/studio-http.ts), mounted as the
 * LangGraph API mounts it (`app.route("/", api)` before its own routes): a
 * `runs.wait` answer whose `__error__` the API serialised twice reaches the
 * client as one error object with a sentence for its message, the keep-alive
 * newlines still streamed first; other answers pass unchanged.
 */
import { type Context, Hono } from "hono";
import { stream } from "hono/streaming";
import { describe, expect, it } from "vitest";
import { app, unwrapWaitBody } from "../../src/server/studio-http.js";

const SENTENCE = "the embedded database in /tmp/x is in use by process 42 (npm start?); stop it";
/** What langgraph-api 1.5's `runs.wait` sends for a run that threw a ConfigError. */
const DOUBLE = JSON.stringify({
  __error__: { error: "Error", message: JSON.stringify({ error: "ConfigError", message: SENTENCE }) },
});

/** The API behind our app: a wait route that streams keep-alives and then `body`, and another route. */
function api(body: string) {
  const server = new Hono();
  server.route("/", app);
  const wait = (c: Context) =>
    stream(c, async (out) => {
      await out.write("\n");
      await out.write("\n");
      await out.write(body);
    });
  server.post("/threads/:thread_id/runs/wait", wait);
  server.post("/runs/wait", wait);
  server.get("/threads/:thread_id/state", (c) => c.text(body));
  return server;
}

describe("the Studio HTTP app", () => {
  it("unwraps a double-encoded run error on runs.wait, keeping the keep-alive newlines first", async () => {
    for (const url of ["http://x/threads/t1/runs/wait", "http://x/runs/wait"]) {
      const response = await api(DOUBLE).request(url, { method: "POST" });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text.startsWith("\n\n")).toBe(true);
      expect(JSON.parse(text)).toEqual({ __error__: { error: "ConfigError", message: SENTENCE } });
    }
  });

  it("leaves run values, single-encoded errors and other routes as they were", async () => {
    const values = JSON.stringify({ status: "completed", messages: [] });
    expect(await (await api(values).request("http://x/runs/wait", { method: "POST" })).text()).toBe(`\n\n${values}`);
    const single = JSON.stringify({ __error__: { error: "ConfigError", message: SENTENCE } });
    expect(await (await api(single).request("http://x/runs/wait", { method: "POST" })).text()).toBe(`\n\n${single}`);
    expect(await (await api(DOUBLE).request("http://x/threads/t1/state")).text()).toBe(DOUBLE);
  });

  it("unwraps only a message that is the JSON of an {error, message} pair", () => {
    expect(JSON.parse(unwrapWaitBody(DOUBLE))).toEqual({ __error__: { error: "ConfigError", message: SENTENCE } });
    const notPair = JSON.stringify({ __error__: { error: "Error", message: '{"detail":"x"}' } });
    expect(unwrapWaitBody(notPair)).toBe(notPair);
    expect(unwrapWaitBody("not json")).toBe("not json");
    expect(unwrapWaitBody("null")).toBe("null");
  });
});
