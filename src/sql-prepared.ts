/**
 * Named (prepared) statements for the statements of every tool step: each
 * connection parses and plans a text once and reuses the plan, which takes a
 * third off what these CTE-heavy statements cost. The name is the text's
 * hash, so one text is one name on every connection; values never go into a
 * text (they are parameters), so the texts come in a handful of shapes.
 *
 * The embedded PGlite is one session behind every socket connection, so a
 * statement one pool client prepared still exists for the client that
 * replaces it, which does not know it and would fail preparing it again:
 * there each new client deallocates the session's statements first
 * (database.ts).
 */
import { createHash } from "node:crypto";
import type pg from "pg";

/** Names by text, so a text is hashed once per process (a few shapes; bounded all the same). */
const names = new Map<string, string>();
const MAX_NAMES = 1_000;

function nameOf(text: string): string {
  const known = names.get(text);
  if (known) return known;
  const name = `warrant_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
  if (names.size >= MAX_NAMES) names.clear();
  names.set(text, name);
  return name;
}

export function statement(text: string, values: readonly unknown[], named: boolean): pg.QueryConfig {
  return named ? { name: nameOf(text), text, values: [...values] } : { text, values: [...values] };
}
