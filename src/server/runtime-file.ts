/**
 * The server's runtime file, `<dataDir>/server.json`: where a running
 * `npm start` of this checkout listens, its pid and which database it
 * serves. `npm start` writes it once it accepts requests and removes it on a
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

const FILE_NAME = "server.json";

export const runtimeFilePath = (dataDir: string): string => path.join(dataDir, FILE_NAME);

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
  const target = runtimeFilePath(dataDir);
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(contents)}\n`, { mode: 0o600 });
  await rename(temporary, target);
}

/** Removes the file if it is still this process's (a newer server may have replaced it). */
export async function removeRuntimeFile(dataDir: string, pid: number = process.pid): Promise<void> {
  const current = await readRuntimeFile(dataDir);
  if (current?.pid === pid) await rm(runtimeFilePath(dataDir), { force: true });
}

/** The file's contents, or undefined when there is none or it is not one. */
export async function readRuntimeFile(dataDir: string): Promise<RuntimeFile | undefined> {
  let text: string;
  try {
    text = await readFile(runtimeFilePath(dataDir), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = RuntimeFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
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
