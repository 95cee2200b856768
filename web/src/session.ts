/**
 * Where the page keeps what survives a reload: the token (this tab's
 * sessionStorage, never a cookie, so other sites cannot send it) and the
 * open thread (the URL, `?thread=<id>`, so a reload or a link reopens it).
 */
const TOKEN_KEY = "warrant.token";

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

export function threadFromUrl(): string | null {
  const id = new URLSearchParams(window.location.search).get("thread");
  return id && /^[0-9a-f-]{36}$/i.test(id) ? id : null;
}

export function setThreadInUrl(threadId: string | null): void {
  const url = new URL(window.location.href);
  if (threadId === null) url.searchParams.delete("thread");
  else url.searchParams.set("thread", threadId);
  window.history.replaceState(null, "", url);
}

/** Seconds until the token's `exp`, read without verifying (the server verifies); null when unreadable. */
export function secondsLeft(token: string, now = Date.now()): number | null {
  try {
    const payload = JSON.parse(atob((token.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/"))) as {
      exp?: unknown;
    };
    return typeof payload.exp === "number" ? Math.floor(payload.exp - now / 1000) : null;
  } catch {
    return null;
  }
}
