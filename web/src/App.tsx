/**
 * The page: signed out → the sign-in form; signed in → the chat. A token is
 * checked against the server (`/ui/session`) before the chat opens, and a
 * 401 anywhere later (an expired token) comes back here with the reason.
 */
import { useCallback, useEffect, useState } from "react";
import { fetchSession, problemOf, type Problem } from "./api";
import { Chat } from "./components/Chat";
import { ProblemBanner } from "./components/ProblemBanner";
import { SignIn } from "./components/SignIn";
import { completeSignIn, isSignInReturn, signOutAtProvider } from "./oidc";
import { storedToken, storeToken } from "./session";
import type { SessionInfo } from "./types";

export function App() {
  const [token, setToken] = useState<string | null>(storedToken);
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [returning, setReturning] = useState(isSignInReturn);

  const signOut = useCallback((reason: Problem | null) => {
    storeToken(null);
    setToken(null);
    setSession(null);
    setProblem(reason);
    // Asked for by the user (no reason): end the identity provider's session too, when there is one.
    if (reason === null) void signOutAtProvider().catch(() => undefined);
  }, []);

  // Back from the identity provider with a code: trade it for the API token once.
  useEffect(() => {
    if (!returning) return;
    completeSignIn().then(
      (signedIn) => {
        setReturning(false);
        setToken(signedIn);
      },
      (error: unknown) => {
        setReturning(false);
        setProblem({ kind: "auth", code: "sign_in_failed", message: `Sign-in did not complete: ${String(error)}` });
      },
    );
  }, [returning]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is the retry trigger (the "Try again" button bumps it).
  useEffect(() => {
    if (token === null) return;
    let current = true;
    setProblem(null);
    fetchSession(token).then(
      (info) => {
        if (!current) return;
        storeToken(token);
        setSession(info);
      },
      (error: unknown) => {
        if (!current) return;
        const found = problemOf(error);
        if (found.kind === "auth") signOut(found);
        else setProblem(found);
      },
    );
    return () => {
      current = false;
    };
  }, [token, attempt, signOut]);

  if (returning)
    return (
      <main className="centered">
        <p role="status">Completing your sign-in…</p>
      </main>
    );
  if (token === null) return <SignIn problem={problem} onToken={setToken} />;
  if (session === null) {
    return (
      <main className="centered">
        {problem ? (
          <ProblemBanner problem={problem} onRetry={() => setAttempt((n) => n + 1)} />
        ) : (
          <p role="status">Checking your sign-in…</p>
        )}
      </main>
    );
  }
  return <Chat token={token} session={session} onSignOut={signOut} />;
}
