/**
 * The CLI as a client of a running server. `npm start` leaves a runtime file
 * in the data directory (src/server/runtime-file.ts); a server counts as
 * running when that file names this process's database, its pid is alive and
 * its URL answers `/healthz`. Then the commands go through its API — a user's
 * token for `chat`, an operator token for `trace`, `audit` and `tools` — and
 * otherwise open the database themselves.
 */
import { loadApiSecret } from "../auth/api-token.js";
import { mintOperatorToken } from "../auth/operator-token.js";
import type { Settings } from "../env.js";
import { WarrantError } from "../errors.js";
import { databaseIdentity, processAlive, readRuntimeFile } from "../server/runtime-file.js";

/** How long the liveness probe waits for `/healthz`. */
const PROBE_TIMEOUT_MS = 3_000;
/** How long one API request may take (a `chat` run is joined in a stream of its own, not through this). */
const REQUEST_TIMEOUT_MS = 10 * 60_000;

/** The URL of a live server of this checkout and database, or undefined. */
export async function findServer(settings: Settings): Promise<string | undefined> {
  const file = await readRuntimeFile(settings.dataDir, databaseIdentity(settings));
  if (!file || !processAlive(file.pid)) return undefined;
  try {
    const response = await fetch(`${file.url}/healthz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body = (await response.json()) as { ok?: unknown };
    return response.ok && body.ok === true ? file.url : undefined;
  } catch {
    return undefined;
  }
}

/** A refusal from the server, printed as `warrant: <code>: <message>` like the CLI's own. */
export class ServerRefusal extends WarrantError {
  readonly status: number;
  constructor(code: string, message: string, status: number) {
    super(code, message);
    this.status = status;
  }
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** One JSON request; a non-2xx answer throws {@link ServerRefusal} with the server's code unless `accept` lists it. */
export async function requestJson<T>(
  url: string,
  token: string,
  method: "GET" | "POST",
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; accept?: number[]; signal?: AbortSignal } = {},
): Promise<ApiAnswer<T>> {
  const signal = options.signal
    ? AbortSignal.any([options.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
    : AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ServerRefusal("server_unreachable", `the server at ${url} did not answer: ${String(error)}`, 0);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = { error: "internal_error", message: text.slice(0, 200) };
  }
  if (!response.ok && !(options.accept ?? []).includes(response.status)) {
    const refusal = body as { error?: unknown; message?: unknown } | null;
    throw new ServerRefusal(
      typeof refusal?.error === "string" ? refusal.error : `http_${response.status}`,
      typeof refusal?.message === "string" ? refusal.message : `${method} ${path} answered ${response.status}`,
      response.status,
    );
  }
  return { status: response.status, body: body as T, headers: response.headers };
}

/**
 * A token for the server's operator routes: `WARRANT_TOKEN` when set (an
 * identity provider's token; the server admits it only for a group mapped
 * as `operator`), else an operator token signed with the server's secret.
 */
export async function operatorToken(settings: Settings): Promise<string> {
  if (settings.server.token !== undefined) return settings.server.token;
  return mintOperatorToken(await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir }));
}
