/**
 * Sign-in: with the organization's identity provider when the server names
 * one (`auth.oidc`); paste a token (`npm run token -- --user alice`); or,
 * when the server serves the dev sign-in (loopback with the shipped dev
 * principals, or WARRANT_DEV_LOGIN=1), pick one of them. After an expired
 * or refused token the provider's button reads "Sign in again".
 */
import { useEffect, useState, type FormEvent } from "react";
import { fetchDevPrincipals, fetchSignInIssuers, mintDevToken, problemOf, type Problem } from "../api";
import { startSignIn, type SignInIssuer } from "../oidc";
import { ProblemBanner } from "./ProblemBanner";

type DevPrincipal = { user_id: string; display_name: string; role: string };

export function SignIn({ problem, onToken }: { problem: Problem | null; onToken: (token: string) => void }) {
  const [pasted, setPasted] = useState("");
  const [principals, setPrincipals] = useState<DevPrincipal[] | null>(null);
  const [devProblem, setDevProblem] = useState<Problem | null>(null);
  const [issuers, setIssuers] = useState<SignInIssuer[]>([]);

  useEffect(() => {
    void fetchDevPrincipals().then(setPrincipals);
    void fetchSignInIssuers().then(setIssuers);
  }, []);

  const signInWith = (issuer: SignInIssuer) => {
    setDevProblem(null);
    startSignIn(issuer).catch((error: unknown) =>
      setDevProblem({
        kind: "down",
        code: "auth_unavailable",
        message: `The identity provider did not answer (${String(error)}).`,
      }),
    );
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (pasted.trim() !== "") onToken(pasted.trim());
  };
  const pick = (user: string) => {
    setDevProblem(null);
    mintDevToken(user).then(
      ({ token }) => onToken(token),
      (error: unknown) => setDevProblem(problemOf(error)),
    );
  };

  return (
    <main className="centered sign-in">
      <h1>Warrant</h1>
      <p>Sign in to chat with the agent that proposes, while code decides.</p>
      {problem && <ProblemBanner problem={problem} />}
      {issuers.length > 0 && (
        <section aria-labelledby="idp-heading" className="identity-providers">
          <h2 id="idp-heading">Your organization</h2>
          <ul>
            {issuers.map((issuer) => (
              <li key={issuer.issuer}>
                <button type="button" onClick={() => signInWith(issuer)}>
                  {problem ? "Sign in again" : "Sign in"} with {new URL(issuer.issuer).host}
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
      <form onSubmit={submit} aria-label="Sign in with a token">
        <label htmlFor="token">API token</label>
        <textarea
          id="token"
          name="token"
          rows={3}
          value={pasted}
          onChange={(event) => setPasted(event.target.value)}
          placeholder="eyJ… (npm run -s token -- --user alice)"
          autoComplete="off"
          spellCheck={false}
        />
        <button type="submit" disabled={pasted.trim() === ""}>
          Sign in
        </button>
      </form>
      {principals && principals.length > 0 && (
        <section aria-labelledby="dev-heading" className="dev-principals">
          <h2 id="dev-heading">Development sign-in</h2>
          <p>This server offers development sign-in; pick a principal.</p>
          {devProblem && <ProblemBanner problem={devProblem} />}
          <ul>
            {principals.map((principal) => (
              <li key={principal.user_id}>
                <button type="button" className="secondary" onClick={() => pick(principal.user_id)}>
                  {principal.display_name} <small>({principal.role})</small>
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  );
}
