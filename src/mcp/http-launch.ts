/**
 * Streamable HTTP servers the host starts itself (a config `launch`): the
 * child announces its URL on its first stdout line, watches its stdin so it
 * never outlives the host, and its exit reports the server down at once.
 * Both revisions' HTTP connections (http-session.ts, modern-http-session.ts)
 * launch through here.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { childEnvironment, REPO_ROOT } from "../env.js";
import type { ServerConfig } from "../policy/config.js";
import type { ConnectionEvents } from "./connection.js";

export interface LaunchedServer {
  url: string;
  process: ChildProcess;
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Stops a child we started: SIGTERM, then SIGKILL if it lingers; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, "exit").then(() => undefined);
  child.kill("SIGTERM");
  const stopped = await Promise.race([exited.then(() => true), sleep(graceMs, false, { ref: false })]);
  if (stopped || hasExited(child)) return;
  child.kill("SIGKILL");
  await Promise.race([exited, sleep(graceMs, undefined, { ref: false })]);
}

/** Set for launched HTTP servers: exit when stdin closes (see tools/caseops). */
export const EXIT_WITH_STDIN_ENV = "WARRANT_EXIT_WITH_STDIN";

/** Starts a server that announces `… listening on <url>` on its first stdout line. A server that fails to announce is stopped. */
export async function launchHttpServer(
  command: string,
  args: string[],
  environment: Record<string, string>,
  timeoutMs = 20_000,
): Promise<LaunchedServer> {
  const child = spawn(command === "node" ? process.execPath : command, args, {
    cwd: REPO_ROOT,
    // The child's stdin is a pipe it watches: if this process dies without
    // stopping it (SIGKILL), the pipe closes and the server exits too.
    env: childEnvironment({ ...environment, [EXIT_WITH_STDIN_ENV]: "1" }),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not announce its URL`)), timeoutMs);
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`${args.at(-1) ?? command} exited with code ${code ?? "signal"} before listening`));
      });
      lines.on("line", (line) => {
        const match = /listening on (http:\/\/\S+)/.exec(line);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    return { url, process: child };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

export type HttpServer = Extract<ServerConfig, { transport: "http" }>;

/** The server an HTTP connection speaks to: its URL, and the child behind it when the host launched it. */
export interface HttpEndpoint {
  url(): string;
  /** Starts the server when the config launches it and it is not running; a no-op for a remote server. */
  ensure(): Promise<void>;
  /** Stops a launched server without reporting its exit (the caller knows; the next `ensure` starts it again). */
  stop(): Promise<void>;
  /** Stops a launched server for good: its exit is no longer reported. */
  close(): Promise<void>;
  readonly launched: boolean;
}

export function httpEndpoint(
  server: HttpServer,
  launchEnvironment: Record<string, string>,
  events: Pick<ConnectionEvents, "down">,
): HttpEndpoint {
  let url = server.url ?? "";
  let launched: LaunchedServer | undefined;
  let closing = false;
  return {
    url: () => url,
    get launched() {
      return launched !== undefined;
    },
    async ensure() {
      if (!server.launch || (launched && !hasExited(launched.process))) return;
      const started = await launchHttpServer(server.launch.command, server.launch.args, {
        ...server.launch.env,
        ...launchEnvironment,
      });
      launched = started;
      url = started.url;
      started.process.once("exit", () => {
        if (launched === started && !closing) events.down("the server process exited");
      });
    },
    async stop() {
      const stopping = launched;
      launched = undefined;
      if (stopping) await stopChild(stopping.process);
    },
    async close() {
      closing = true;
      if (launched) await stopChild(launched.process);
    },
  };
}
