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
import { storedToken, storeToken } from "./session";
import type { SessionInfo } from "./types";

export function App() {
  const [token, setToken] = useState<string | null>(storedToken);
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);

  const signOut = useCallback((reason: Problem | null) => {
    storeToken(null);
    setToken(null);
    setSession(null);
    setProblem(reason);
  }, []);

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
