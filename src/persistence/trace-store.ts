/**
 * Finds where a run lives, for `npm run trace`: one id works whether it came
 * from the API (an API run, a resume of one), the ledger or the audit table.
 * The Warrant run id is `state.run.run_id`; the API's run ids that worked on
 * it are listed beside it (a resume run's `outcome.warrant_run_id` names it).
 */
import type pg from "pg";
import type { RunOrigin } from "../trace/trace-entries.js";
import type { ListedTool } from "../mcp/catalog.js";
import type { ToolManifest } from "../mcp/pins.js";
import { quoteSchemaName } from "./ledger-store.js";

/** A timestamptz as the ISO text the rest of the trace uses. */
const UTC = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

interface ApiRunRow {
  run_id: string;
  thread_id: string;
  owner: string;
  warrant_run_id: string | null;
  created_at: string;
  graph_id: string | null;
  metadata: Record<string, unknown> | null;
  config: { tags?: unknown; run_name?: unknown } | null;
}

export async function findRunOrigin(pool: pg.Pool, schema: string, runId: string): Promise<RunOrigin | undefined> {
  const s = quoteSchemaName(schema);
  // An API run id first resolves to the Warrant run it worked on.
  const asked = await pool.query<{ warrant_run_id: string | null }>(
    `select outcome->>'warrant_run_id' as warrant_run_id from ${s}.runs where run_id::text = $1`,
    [runId],
  );
  const warrantRunId = asked.rows[0]?.warrant_run_id ?? runId;
  const [chained, api, ledger] = await Promise.all([
    pool.query<{ thread_id: string; owner: string; started_at: string }>(
      `select thread_id, owner, started_at from ${s}.audit_runs where run_id = $1`,
      [warrantRunId],
    ),
    pool.query<ApiRunRow>(
      `select r.run_id::text as run_id, r.thread_id::text as thread_id, r.owner, r.outcome->>'warrant_run_id' as warrant_run_id,
              ${UTC("r.created_at")} as created_at, t.graph_id, r.metadata, r.kwargs->'config' as config
         from ${s}.runs r join ${s}.threads t using (thread_id)
        where r.run_id::text = $1 or r.outcome->>'warrant_run_id' = $1
        order by r.created_at, r.run_id`,
      [warrantRunId],
    ),
    pool.query<{ thread_id: string; owner: string | null; started_at: string }>(
      `select thread_id, owner, ${UTC("started_at")} as started_at from ${s}.ledger where run_id = $1 order by started_at limit 1`,
      [warrantRunId],
    ),
  ]);
  const first = api.rows[0];
  const start = chained.rows[0] ?? (first ? { ...first, started_at: first.created_at } : ledger.rows[0]);
  if (!start) return undefined;
  return {
    run_id: warrantRunId,
    thread_id: start.thread_id,
    owner: start.owner ?? first?.owner ?? "",
    started_at: start.started_at,
    api_runs: api.rows.map((row) => row.run_id),
    graph_id: first?.graph_id ?? null,
    labels: labelsOf(api.rows),
  };
}

/**
 * The labels of the API runs that worked on a run (`config.tags`,
 * `config.run_name`, the client metadata, already without the server's keys):
 * every tag once, the first name, the metadata merged oldest first.
 */
function labelsOf(rows: readonly ApiRunRow[]): NonNullable<RunOrigin["labels"]> {
  const tags = new Set<string>();
  let name: string | null = null;
  let metadata: Record<string, unknown> = {};
  for (const row of rows) {
    const config = row.config ?? {};
    if (Array.isArray(config.tags)) for (const tag of config.tags) if (typeof tag === "string") tags.add(tag);
    if (name === null && typeof config.run_name === "string") name = config.run_name;
    metadata = { ...metadata, ...(row.metadata ?? {}) };
  }
  return { tags: [...tags], run_name: name, metadata };
}

/** The newest runs' Warrant run ids, newest first (the audit chain's start records; the host's own chain excluded). */
export async function recentRunIds(pool: pg.Pool, schema: string, limit: number): Promise<string[]> {
  const s = quoteSchemaName(schema);
  const found = await pool.query<{ run_id: string }>(
    `select run_id from ${s}.audit_runs where thread_id <> '' order by started_at desc, run_id limit $1`,
    [limit],
  );
  return found.rows.map((row) => row.run_id);
}

/** The pinned tool definitions (what each contracted tool was when it ran), as servers list tools. */
export async function recordedDefinitions(
  pool: pg.Pool,
  schema: string,
): Promise<{ server: string; tool: ListedTool }[]> {
  const s = quoteSchemaName(schema);
  const found = await pool.query<{ server: string; manifest: string }>(
    `select server, manifest from ${s}.tool_pins order by tool`,
  );
  return found.rows.map((row) => {
    const manifest = JSON.parse(row.manifest) as ToolManifest;
    return {
      server: row.server,
      tool: {
        name: manifest.name,
        description: manifest.description ?? undefined,
        inputSchema: manifest.input_schema,
        outputSchema: manifest.output_schema ?? undefined,
      },
    };
  });
}
