/**
 * Talking to the Warrant server the page was loaded from: the SDK client
 * with the bearer token, the page's own routes, and one reading of errors.
 */
import { Client } from "@langchain/langgraph-sdk";
import type { SignInIssuer } from "./oidc";
import type { ResumeDecision, SessionInfo } from "./types";

export const API_URL = window.location.origin;

/** What went wrong, in the terms the page acts on. */
export interface Problem {
  /** `auth`: sign in again; `down`: the server did not answer, retry; `refused`: the server said no. */
  kind: "auth" | "down" | "refused";
  code: string;
  message: string;
}

export function makeClient(token: string): Client {
  // No SDK retries: the page shows each refusal and offers its own retry.
  return new Client({
    apiUrl: API_URL,
    defaultHeaders: { Authorization: `Bearer ${token}` },
    callerOptions: { maxRetries: 0 },
  });
}

/** Reads an SDK or fetch error: `HTTP 401: {"error":…}` bodies keep their code. */
export function problemOf(error: unknown): Problem {
  const status =
    typeof error === "object" && error !== null && "status" in error
      ? Number((error as { status: unknown }).status)
      : undefined;
  const text = error instanceof Error ? error.message : String(error);
  if (status === undefined || Number.isNaN(status)) {
    const down = /fetch|network|connect|Load failed/i.test(text);
    return down
      ? { kind: "down", code: "server_unreachable", message: "The server did not answer." }
      : { kind: "refused", code: "error", message: text };
  }
  const body = /^HTTP \d+: (.*)$/s.exec(text)?.[1];
  let code = `http_${status}`;
  let message = text;
  try {
    const parsed: unknown = body ? JSON.parse(body) : undefined;
    if (typeof parsed === "object" && parsed !== null) {
      const record = parsed as Record<string, unknown>;
      if (typeof record.error === "string") code = record.error;
      if (typeof record.message === "string") message = record.message;
    }
  } catch {
    if (body) message = body;
  }
  if (status === 401) return { kind: "auth", code, message };
  if (status >= 502) return { kind: "down", code, message };
  return { kind: "refused", code, message };
}

async function request<T>(pathname: string, init: RequestInit & { token?: string } = {}): Promise<T> {
  const { token, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  if (rest.body) headers.set("Content-Type", "application/json");
  // A server that is down makes fetch throw ("Failed to fetch"): problemOf reads that as `down`.
  const response = await fetch(`${API_URL}${pathname}`, { ...rest, headers });
  const text = await response.text();
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}: ${text}`), { status: response.status });
  return JSON.parse(text) as T;
}

/** Who the token is, the run budgets and the tools' schemas; a 401 means the token is not good. */
export const fetchSession = (token: string) => request<SessionInfo>("/ui/session", { token });

/** The identity providers the page may sign in with (`auth.oidc` issuers with a public client). */
export async function fetchSignInIssuers(): Promise<SignInIssuer[]> {
  try {
    const { oidc } = await request<{ oidc?: unknown }>("/ui/sign-in");
    return Array.isArray(oidc) ? (oidc as SignInIssuer[]) : [];
  } catch {
    return [];
  }
}

/**
 * The dev principals, or null when the server does not serve the dev sign-in
 * (it says so at `/ui/sign-in`, so the page never probes a route it does not have).
 */
export async function fetchDevPrincipals(): Promise<{ user_id: string; display_name: string; role: string }[] | null> {
  try {
    const { dev_login } = await request<{ dev_login?: unknown }>("/ui/sign-in");
    if (dev_login !== true) return null;
    const answer = await request<{ principals: { user_id: string; display_name: string; role: string }[] }>(
      "/dev/principals",
    );
    return answer.principals;
  } catch {
    return null;
  }
}

export const mintDevToken = (user: string) =>
  request<{ token: string }>("/dev/token", { method: "POST", body: JSON.stringify({ user }) });

/** The reviewer inbox when the server has one (`GET /reviews`), else null. */
export async function fetchReviews(token: string): Promise<unknown[] | null> {
  try {
    const answer = await request<unknown>("/reviews", { token });
    if (Array.isArray(answer)) return answer;
    if (typeof answer === "object" && answer !== null && Array.isArray((answer as { reviews?: unknown }).reviews))
      return (answer as { reviews: unknown[] }).reviews;
    return [];
  } catch {
    return null;
  }
}

/** What deciding an inbox review answered: where the owner's thread was left. */
export interface ReviewOutcome {
  status: string | null;
  termination_reason: { code: string; detail: string; budget?: string } | null;
  /** Reviews still pending after the decision (a refused answer is asked again, with `error`). */
  pending: unknown[];
  /** Per action, what came of it (read by the server from the ledger). */
  actions?: unknown[];
  /** The thread's final answer, when the run gave one. */
  result?: unknown;
}

/** Decides an inbox review (`POST /reviews/{thread_id}`); the run is waited for. */
export const decideReview = (token: string, threadId: string, decisions: ResumeDecision[]) =>
  request<ReviewOutcome>(`/reviews/${encodeURIComponent(threadId)}`, {
    token,
    method: "POST",
    body: JSON.stringify({ decisions }),
  });
