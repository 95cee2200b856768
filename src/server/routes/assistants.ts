/** Assistants: `agent` and `workflow`, fixed by the server (clients cannot create or change them). */
import type { Context, Hono } from "hono";
import { errorBody, notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { AssistantSearch, AssistantVersions } from "../requests.js";
import { parseBody } from "../request-fields.js";
import { assistantSchemas } from "../schemas.js";

const SERVER_STARTED = new Date().toISOString();

export function registerAssistantRoutes(app: Hono<Env>, { graphs, body }: RouteContext): void {
  const assistantJson = (graphId: string) => ({
    assistant_id: graphId,
    graph_id: graphId,
    name: graphId,
    description:
      graphId === "agent"
        ? "Warrant's controlled agent"
        : "Warrant's fixed workflow (code-owned steps) on the same control plane",
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
  const graphParam = (c: Context<Env>) => {
    const graph = graphs.get(c.req.param("assistant_id") ?? "");
    if (graph === undefined) throw notFound("assistant");
    return graph;
  };
  /** The fixed assistants matching a search, in SDK order; name is a case-insensitive substring. */
  const searchAssistants = (query: ReturnType<typeof AssistantSearch.parse>) => {
    const name = query.name?.toLowerCase();
    const sortBy = query.sort_by ?? "created_at";
    const direction = query.sort_order === "asc" ? 1 : -1;
    const found = [...graphs.keys()]
      .map(assistantJson)
      .filter(
        (assistant) =>
          (query.graph_id == null || query.graph_id === assistant.graph_id) &&
          (name == null || assistant.name.toLowerCase().includes(name)),
      )
      .filter((assistant) => containsAll(assistant.metadata, query.metadata ?? {}))
      // Both assistants were created together: ties fall back to the id, so the order is stable.
      .sort(
        (a, b) =>
          direction *
          (String(a[sortBy]).localeCompare(String(b[sortBy])) || a.assistant_id.localeCompare(b.assistant_id)),
      );
    return found;
  };
  const page = <T>(items: T[], query: { offset?: number | undefined; limit?: number | undefined }) =>
    items.slice(query.offset ?? 0, (query.offset ?? 0) + (query.limit ?? 10));
  app.post("/assistants/search", async (c) => {
    const query = parseBody(AssistantSearch, (await body(c)) ?? {});
    const found = page(searchAssistants(query), query);
    const select = query.select && query.select.length > 0 ? query.select : undefined;
    return c.json(
      select
        ? found.map((assistant) =>
            Object.fromEntries(
              Object.entries(assistant).filter(([key]) => (select as readonly string[]).includes(key)),
            ),
          )
        : found,
    );
  });
  app.post("/assistants/count", async (c) =>
    c.json(searchAssistants(parseBody(AssistantSearch, (await body(c)) ?? {})).length),
  );
  // Each assistant has one version, fixed by the server.
  app.post("/assistants/:assistant_id/versions", async (c) => {
    const id = assistantParam(c);
    const query = parseBody(AssistantVersions, (await body(c)) ?? {});
    const { assistant_id, graph_id, config, context, metadata, version, created_at } = assistantJson(id);
    const versions = containsAll(metadata, query.metadata ?? {})
      ? [{ assistant_id, graph_id, name: id, config, context, metadata, version, created_at }]
      : [];
    return c.json(page(versions, query));
  });
  app.post("/assistants/:assistant_id/latest", (c) => {
    assistantParam(c);
    return c.json(errorBody("unsupported", "assistants are fixed by the server: version 1 is the only one"), 422);
  });
  app.get("/assistants/:assistant_id", (c) => c.json(assistantJson(assistantParam(c))));
  app.get("/assistants/:assistant_id/schemas", (c) => c.json(assistantSchemas(assistantParam(c))));
  app.get("/assistants/:assistant_id/graph", async (c) => {
    const graph = graphParam(c);
    return c.json((await graph.getGraphAsync()).toJSON());
  });
  app.get("/assistants/:assistant_id/subgraphs", (c) => {
    assistantParam(c);
    return c.json({});
  });
  const fixedAssistants = (c: Context<Env>) =>
    c.json(errorBody("unsupported", "assistants are fixed by the server (agent, workflow)"), 422);
  app.post("/assistants", fixedAssistants);
  app.patch("/assistants/:assistant_id", fixedAssistants);
  app.delete("/assistants/:assistant_id", fixedAssistants);
}

/** Whether `value` has every key of `filter` with an equal (JSON) value. */
function containsAll(value: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(
    ([key, expected]) => Object.hasOwn(value, key) && JSON.stringify(value[key]) === JSON.stringify(expected),
  );
}
