/** Assistants: `agent` and `workflow`, fixed by the server (clients cannot create or change them). */
import type { Context, Hono } from "hono";
import { errorBody, notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { AssistantSearch, parseBody } from "../requests.js";
import { assistantSchemas } from "../schemas.js";

const SERVER_STARTED = new Date().toISOString();

export function registerAssistantRoutes(app: Hono<Env>, { graphs, body }: RouteContext): void {
  const assistantJson = (graphId: string) => ({
    assistant_id: graphId,
    graph_id: graphId,
    name: graphId,
    description: graphId === "agent" ? "Warrant's controlled agent" : "Warrant's fixed workflow (rules planner) on the same control plane",
    config: {},
    context: {},
    metadata: { created_by: "system" },
    version: 1,
    created_at: SERVER_STARTED,
    updated_at: SERVER_STARTED,
  });
  const assistantParam = (c: Context<Env>) => {
    const id = c.req.param("assistant_id") ?? "";
    if (!graphs.has(id)) throw notFound("assistant");
    return id;
  };
  const searchAssistants = (query: ReturnType<typeof AssistantSearch.parse>) =>
    [...graphs.keys()]
      .filter((id) => (query.graph_id === undefined || query.graph_id === id) && (query.name === undefined || id.includes(query.name)))
      .map(assistantJson)
      .slice(query.offset ?? 0, (query.offset ?? 0) + (query.limit ?? 10));
  app.post("/assistants/search", async (c) => c.json(searchAssistants(parseBody(AssistantSearch, (await body(c)) ?? {}))));
  app.post("/assistants/count", async (c) => c.json(searchAssistants({ ...parseBody(AssistantSearch, (await body(c)) ?? {}), limit: 1000, offset: 0 }).length));
  app.get("/assistants/:assistant_id", (c) => c.json(assistantJson(assistantParam(c))));
  app.get("/assistants/:assistant_id/schemas", (c) => c.json(assistantSchemas(assistantParam(c))));
  app.get("/assistants/:assistant_id/graph", async (c) => {
    const graph = graphs.get(assistantParam(c))!;
    return c.json((await graph.getGraphAsync()).toJSON());
  });
  app.get("/assistants/:assistant_id/subgraphs", (c) => {
    assistantParam(c);
    return c.json({});
  });
  const fixedAssistants = (c: Context<Env>) => c.json(errorBody("unsupported", "assistants are fixed by the server (agent, workflow)"), 422);
  app.post("/assistants", fixedAssistants);
  app.patch("/assistants/:assistant_id", fixedAssistants);
  app.delete("/assistants/:assistant_id", fixedAssistants);
}
