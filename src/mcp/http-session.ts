/**
 * Streamable HTTP MCP servers with per-call task tokens. One MCP session per
 * server serves every call: the token is minted for each call (audience,
 * tenant, task, subject, scopes) and attached by a fetch wrapper from the
 * call's async context. (The adapter opens a new connection per distinct
 * header set, which would grow without bound with per-call tokens.)
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { childEnvironment, REPO_ROOT } from "../env.js";

const currentToken = new AsyncLocalStorage<string>();

/** Runs `work` with `token` as the bearer token of every request it makes. */
export function withTaskToken<T>(token: string, work: () => Promise<T>): Promise<T> {
  return currentToken.run(token, work);
}

const authorizingFetch: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  const token = currentToken.getStore();
  if (token) headers.set("authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};

export interface LaunchedServer {
  url: string;
  process: ChildProcess;
}

/** Starts a server that announces `… listening on <url>` on its first stdout line. */
export async function launchHttpServer(command: string, args: string[], environment: Record<string, string>, timeoutMs = 20_000): Promise<LaunchedServer> {
  const child = spawn(command === "node" ? process.execPath : command, args, {
    cwd: REPO_ROOT,
    env: childEnvironment(environment),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not announce its URL`)), timeoutMs);
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
}

/** Connects one MCP client session to a Streamable HTTP server; the first token opens the session. */
export async function connectHttp(url: string, initialToken: string): Promise<Client> {
  const client = new Client({ name: "warrant-host", version: "0.1.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: authorizingFetch });
  await withTaskToken(initialToken, () => client.connect(transport));
  return client;
}
