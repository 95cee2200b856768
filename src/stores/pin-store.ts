/**
 * Pinned tool definitions in Postgres (`<schema>.tool_pins`), one row per
 * contracted tool: the pinned hash and manifest, and the differing definition
 * a server served last (for review). A changed definition and its approval
 * are audit events, chained like a run's (src/stores/audit-chain-store.ts)
 * under the host's own chain `tool-pins`, so they are tamper-evident too.
 */
import type pg from "pg";
import {
  CONFIG_APPROVER,
  type PinStore,
  type PinVerdict,
  type ToolDefinition,
  type ToolManifest,
  type ToolPin,
} from "../mcp/pins.js";
import { chainedStatement, utcText } from "./audit-chain-store.js";
import { quoteSchemaName } from "../sql-names.js";
import { Params } from "../db/sql-params.js";
import { sha256Hex, type RunStart } from "../audit/chain.js";

export function pinTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.tool_pins (
      tool text primary key,
      server text not null,
      hash text not null,
      manifest text not null,
      pinned_at timestamptz not null default now(),
      approved_by text,
      served_hash text,
      served_manifest text,
      served_at timestamptz
    )`,
  ];
}

/** The host's audit chain for definition changes and approvals (no thread, no run of a user). */
export const PIN_CHAIN: RunStart = {
  thread_id: "",
  run_id: "tool-pins",
  owner: "warrant-host",
  request_sha256: sha256Hex("pinned tool definitions"),
  started_at: "1970-01-01T00:00:00.000Z",
};

interface PinRow {
  tool: string;
  server: string;
  hash: string;
  manifest: string;
  pinned_at: string;
  approved_by: string | null;
  served_hash: string | null;
  served_manifest: string | null;
  served_at: string | null;
}

function toPin(row: PinRow): ToolPin {
  return {
    ...row,
    manifest: JSON.parse(row.manifest) as ToolManifest | null,
    served_manifest: row.served_manifest === null ? null : (JSON.parse(row.served_manifest) as ToolManifest),
  };
}

export function createPinStore(pool: pg.Pool, schema: string): PinStore {
  const table = `${quoteSchemaName(schema)}.tool_pins`;
  const columns = `tool, server, hash, manifest, ${utcText("pinned_at")} as pinned_at, approved_by,
    served_hash, served_manifest, ${utcText("served_at")} as served_at`;

  /** A pin-chain event for a row the CTE `written` changed. */
  const pinEvent = (
    params: Params,
    kind: "definition_changed" | "definition_approved",
    detail: string,
    actor: string,
  ) =>
    `select ''::text as thread_id, ${params.add(PIN_CHAIN.run_id)} as run_id, '${kind}'::text as kind,
            w.tool as subject, true as numbered, 'host'::text as node, ${params.add(actor)} as actor,
            '${kind}'::text as code, w.tool as tool, ${detail} as detail, clock_timestamp() as at
       from written w`;

  return {
    async check(definitions) {
      const verdicts: PinVerdict[] = [];
      for (const definition of definitions) verdicts.push(await checkOne(definition));
      return verdicts;
    },
    async get(tool) {
      const found = await pool.query<PinRow>(`select ${columns} from ${table} where tool = $1`, [tool]);
      const row = found.rows[0];
      return row ? toPin(row) : undefined;
    },
    async approve(tool, approver, served) {
      const params = new Params();
      const written = `written as (
        update ${table} p
           set hash = p.served_hash, manifest = p.served_manifest, pinned_at = now(), approved_by = ${params.add(approver)},
               served_hash = null, served_manifest = null, served_at = null
          from ${table} old
         where old.tool = p.tool and p.tool = ${params.add(tool)} and p.served_hash is not null
           and (${params.add(served ?? null)} is null or p.served_hash = ${params.add(served ?? null)})
        returning p.tool, p.server, p.hash, old.hash as old_hash)`;
      const detail = `json_build_object('server', w.server, 'approved_hash', w.hash, 'replaced_hash', w.old_hash,
        'approved_by', ${params.add(approver)})::text`;
      const changed = await pool.query(
        chainedStatement(schema, params, PIN_CHAIN, {
          ctes: [written],
          link: pinEvent(params, "definition_approved", detail, approver),
        }),
        params.values,
      );
      return (changed.rowCount ?? 0) === 0 ? undefined : this.get(tool);
    },
  };

  /**
   * Makes the stored pin the config's (config pins win): one statement that
   * upserts the row and appends a `definition_approved` event by the config
   * when the pinned hash changes. The manifest is known when the served
   * definition is the configured one; until then it is stored as null.
   */
  async function adoptConfigured(definition: ToolDefinition, configured: string): Promise<void> {
    const served = JSON.stringify(definition.manifest);
    const known = definition.hash === configured ? served : "null";
    const stored = await pool.query<{ hash: string; manifest: string }>(
      `select hash, manifest from ${table} where tool = $1`,
      [definition.tool],
    );
    const row = stored.rows[0];
    if (row?.hash === configured) {
      if (row.manifest === "null" && known !== "null")
        await pool.query(`update ${table} set manifest = $3 where tool = $1 and hash = $2`, [
          definition.tool,
          configured,
          known,
        ]);
      return;
    }
    const params = new Params();
    const tool = params.add(definition.tool);
    const old = `old as (select hash from ${table} where tool = ${tool})`;
    const written = `written as (
      insert into ${table} (tool, server, hash, manifest, approved_by)
      values (${tool}, ${params.add(definition.server)}, ${params.add(configured)}, ${params.add(known)}, ${params.add(CONFIG_APPROVER)})
      on conflict (tool) do update
        set hash = excluded.hash, manifest = excluded.manifest, pinned_at = now(), approved_by = excluded.approved_by,
            served_hash = null, served_manifest = null, served_at = null
        where ${table}.hash <> excluded.hash
      returning tool, server, hash)`;
    const detail = `json_build_object('server', w.server, 'approved_hash', w.hash, 'replaced_hash', (select hash from old),
      'approved_by', ${params.add(CONFIG_APPROVER)})::text`;
    await pool.query(
      chainedStatement(schema, params, PIN_CHAIN, {
        ctes: [old, written],
        link: pinEvent(params, "definition_approved", detail, CONFIG_APPROVER),
      }),
      params.values,
    );
  }

  async function checkOne(definition: ToolDefinition): Promise<PinVerdict> {
    if (definition.configured_hash !== undefined) await adoptConfigured(definition, definition.configured_hash);
    const manifest = JSON.stringify(definition.manifest);
    // Trust on first sight: a contracted tool seen for the first time is pinned as it is.
    const inserted = await pool.query(
      `insert into ${table} (tool, server, hash, manifest) values ($1, $2, $3, $4) on conflict (tool) do nothing`,
      [definition.tool, definition.server, definition.hash, manifest],
    );
    if ((inserted.rowCount ?? 0) === 1)
      return { tool: definition.tool, status: "pinned_now", pinned_hash: definition.hash };
    const found = await pool.query<{ hash: string; served_hash: string | null }>(
      `select hash, served_hash from ${table} where tool = $1`,
      [definition.tool],
    );
    const pinned = found.rows[0];
    if (!pinned) return checkOne(definition);
    if (pinned.hash === definition.hash) {
      // Served as pinned again: nothing is waiting for review any more.
      if (pinned.served_hash !== null)
        await pool.query(
          `update ${table} set served_hash = null, served_manifest = null, served_at = null where tool = $1 and hash = $2`,
          [definition.tool, definition.hash],
        );
      return { tool: definition.tool, status: "matches", pinned_hash: pinned.hash };
    }
    if (pinned.served_hash !== definition.hash) {
      // A new differing definition: kept for review, and an audit event names both hashes (once per hash).
      const params = new Params();
      const written = `written as (
        update ${table} set served_hash = ${params.add(definition.hash)}, served_manifest = ${params.add(manifest)}, served_at = now()
         where tool = ${params.add(definition.tool)} and hash <> ${params.add(definition.hash)}
           and served_hash is distinct from ${params.add(definition.hash)}
        returning tool, server, hash, served_hash)`;
      const detail = `json_build_object('server', w.server, 'pinned_hash', w.hash, 'served_hash', w.served_hash)::text`;
      await pool.query(
        chainedStatement(schema, params, PIN_CHAIN, {
          ctes: [written],
          link: pinEvent(params, "definition_changed", detail, PIN_CHAIN.owner),
        }),
        params.values,
      );
    }
    return { tool: definition.tool, status: "changed", pinned_hash: pinned.hash, served_hash: definition.hash };
  }
}
