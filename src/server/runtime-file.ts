/**
 * The server's runtime file, one per database: `<dataDir>/server.json` for
 * the embedded database, `<dataDir>/server-postgres-<hash>.json` for a
 * Postgres server (so a second `npm start` with DATABASE_URL from the same
 * checkout never overwrites or removes the embedded server's file). It says
 * where a running `npm start` of this checkout listens, its pid and which
 * database it serves. `npm start` writes it once it accepts requests and removes it on a
 * clean shutdown; the CLI (`chat`, `trace`, `audit`, `tools`) reads it to
 * become a client of that server instead of opening the database itself
 * (the embedded database admits one process). A file left by a server that
 * died is ignored: its pid is gone, or its URL does not answer.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";

const RuntimeFileSchema = z.object({
  url: z.string().regex(/^http:\/\/[^\s/]+$/),
  pid: z.number().int().positive(),
  database: z.string().max(200),
  started_at: z.string().max(64),
});
export type RuntimeFile = z.infer<typeof RuntimeFileSchema>;

/** The file of the server on `database` (a {@link databaseIdentity}). */
export function runtimeFilePath(dataDir: string, database: string): string {
  if (database.startsWith("embedded:")) return path.join(dataDir, "server.json");
  // The identity is a hash already; its first 16 hex digits name the file.
  const hash = createHash("sha256").update(database).digest("hex").slice(0, 16);
  return path.join(dataDir, `server-postgres-${hash}.json`);
}

/**
 * Which database a process uses, comparable across processes without
 * writing a password to disk: the embedded one by its directory, a server by
 * a hash of its URL.
 */
export function databaseIdentity(settings: { databaseUrl: string | undefined; dataDir: string }): string {
  if (!settings.databaseUrl) return `embedded:${createHash("sha256").update(settings.dataDir).digest("hex")}`;
  return `postgres:${createHash("sha256").update(settings.databaseUrl).digest("hex")}`;
}

/** Writes the file atomically (a reader never sees half of it). */
export async function writeRuntimeFile(dataDir: string, contents: RuntimeFile): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const target = runtimeFilePath(dataDir, contents.database);
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(contents)}\n`, { mode: 0o600 });
  await rename(temporary, target);
}

/** Removes the database's file if it is still this process's (a newer server may have replaced it). */
export async function removeRuntimeFile(dataDir: string, database: string, pid: number = process.pid): Promise<void> {
  const current = await readRuntimeFile(dataDir, database);
  if (current?.pid === pid) await rm(runtimeFilePath(dataDir, database), { force: true });
}

/** The file of the server on `database`, or undefined when there is none or it is not one (or names another database). */
export async function readRuntimeFile(dataDir: string, database: string): Promise<RuntimeFile | undefined> {
  let text: string;
  try {
    text = await readFile(runtimeFilePath(dataDir, database), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = RuntimeFileSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.database === database ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
