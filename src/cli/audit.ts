/**
 * `npm run audit -- verify [RUN_ID] [--json]`: recomputes the tamper-evident
 * audit chains (every run's, or one) from the database named by DATABASE_URL
 * (else the embedded one), or asks a running `npm start` of this checkout to
 * (`GET /operator/audit/verify`), and names the first broken link: table, primary
 * key, and the column when it can be told. Exit 0 when intact, 1 when broken
 * or on a configuration or database error, 2 on a usage error.
 */
import { loadSettings } from "../env.js";
import { openDatabase } from "../stores/open-database.js";
import type { ChainBreak, VerifyReport } from "../audit/chain.js";
import { commandLine, RUN_ID, usageError } from "./command-line.js";
import { exitOnConfigError } from "./config-errors.js";
import { findServer, operatorToken, requestJson } from "./server-client.js";
import { AUDIT_USAGE as USAGE } from "./usage.js";

function describe(broken: ChainBreak): string {
  const key = Object.entries(broken.key)
    .map(([column, value]) => `${column}=${JSON.stringify(value)}`)
    .join(", ");
  return `${broken.table} (${key})${broken.column ? ` column ${broken.column}` : ""}: ${broken.problem}`;
}

function report(result: VerifyReport, json: boolean): string {
  if (json) return JSON.stringify({ ok: result.breaks.length === 0, first: result.breaks[0] ?? null, ...result });
  const counted = `${result.runs} run(s), ${result.events} event(s), ${result.rows} ledger/approval row(s)`;
  if (result.breaks.length === 0) return `audit chain intact: ${counted}`;
  const [first, ...rest] = result.breaks;
  const lines = [`audit chain broken: first broken link: ${first ? describe(first) : ""}`];
  for (const broken of rest.slice(0, 20)) lines.push(`  also: ${describe(broken)}`);
  if (rest.length > 20) lines.push(`  … and ${rest.length - 20} more`);
  lines.push(`checked ${counted}`);
  return lines.join("\n");
}

async function main(argv: string[]): Promise<number> {
  const parsed = commandLine(argv, { json: { type: "boolean" } }, USAGE);
  if (typeof parsed === "number") return parsed;
  const [command, runId, ...extra] = parsed.positionals;
  if (command !== "verify" || extra.length > 0 || (runId !== undefined && !RUN_ID.test(runId))) {
    return usageError("expected `verify [RUN_ID]`", USAGE);
  }
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    const server = await findServer(settings);
    if (server) {
      const query = runId === undefined ? "" : `?run_id=${encodeURIComponent(runId)}`;
      const answer = await requestJson<VerifyReport>(
        server,
        await operatorToken(settings),
        "GET",
        `/operator/audit/verify${query}`,
      );
      return print(answer.body, runId, parsed.values["json"] === true);
    }
    const database = await openDatabase({
      ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
      dataDir: settings.dataDir,
    });
    try {
      return print(await database.verifyAudit(runId), runId, parsed.values["json"] === true);
    } finally {
      await database.close();
    }
  });
}

function print(result: VerifyReport, runId: string | undefined, json: boolean): number {
  process.stdout.write(`${report(result, json)}\n`);
  if (runId !== undefined && result.runs === 0) {
    process.stderr.write(`warrant: not_found: no audit chain for run ${runId}\n`);
    return 1;
  }
  return result.breaks.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
