/**
 * The embedded database when several workers serve: the primary owns PGlite
 * (started once, its data directory locked with the primary's pid the way
 * src/db/database.ts locks it for one process, so `npm run dev`
 * and a second `npm start` still see it taken), serves it on a loopback
 * socket and puts the wire relay (wire-relay.ts) in front; the workers
 * connect to the relay as to a Postgres server, one connection each. Setup
 * (migrations) runs here once, before any worker starts, because PGlite's
 * one session would let two workers' setup locks both succeed.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { ConfigError } from "../errors.js";
import { embeddedDatabaseHolder } from "../db/database.js";
import { openDatabase } from "../stores/open-database.js";
import { startWireRelay } from "./wire-relay.js";

export interface SharedEmbedded {
  /** `postgres://postgres@127.0.0.1:<relay port>/postgres`: what each worker opens. */
  url: string;
  close(): Promise<void>;
}

/** Socket slots: a connection and its replacement (see database.ts) per worker, their LISTEN ones, and setup's. */
const slotsFor = (workers: number) => workers * 4 + 2;

export async function startSharedEmbedded(dataDir: string, workers: number, waitMs: number): Promise<SharedEmbedded> {
  const directory = path.resolve(dataDir, "pglite");
  const lockPath = path.join(dataDir, "pglite.lock");
  await fs.mkdir(directory, { recursive: true });
  const holder = await embeddedDatabaseHolder(dataDir);
  if (holder !== undefined)
    throw new ConfigError(
      "database_unreachable",
      `the embedded database in ${dataDir} is in use by process ${holder}; stop it, or set DATABASE_URL to share a Postgres server`,
    );
  // No live holder: a lock left is stale (its process is gone); a racing second primary fails on `wx`.
  await fs.rm(lockPath, { force: true });
  await fs.writeFile(lockPath, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
  const unlock = () => fs.rm(lockPath, { force: true });
  let pglite: PGlite | undefined;
  let socket: PGLiteSocketServer | undefined;
  try {
    pglite = await PGlite.create({ dataDir: directory });
    socket = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port: 0, maxConnections: slotsFor(workers) });
    await socket.start();
    const [host = "127.0.0.1", port = "0"] = socket.getServerConn().split(":");
    const relay = await startWireRelay({ host, port: Number(port) });
    const url = `postgres://postgres@${relay.address}/postgres`;
    // Migrations once, here; the workers' own setup then finds them applied.
    const setup = await openDatabase({ databaseUrl: url, dataDir, pool: { max: 1, backgroundMax: 0, waitMs } });
    await setup.close();
    const opened = { pglite, socket };
    return {
      url,
      close: async () => {
        try {
          await relay.close();
          await opened.socket.stop();
          await opened.pglite.close();
        } finally {
          await unlock();
        }
      },
    };
  } catch (error) {
    await socket?.stop().catch(() => undefined);
    await pglite?.close().catch(() => undefined);
    await unlock();
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(
      "database_unreachable",
      `cannot serve the embedded database in ${directory}: ${String(error)}`,
      {
        cause: error,
      },
    );
  }
}
