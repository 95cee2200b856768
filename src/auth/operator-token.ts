/**
 * Operator tokens: what `npm run trace`, `audit` and `tools` send to the
 * server's operator routes (`/operator/*`). Those commands have no user —
 * they read every run, like the database they would otherwise open — so the
 * token names no principal: it is an HS256 JWT with the server's API secret
 * and its own audience (`warrant-operator`), which no API route accepts and
 * which an API token cannot stand in for. Whoever can read the secret
 * (`<dataDir>/auth-secret` or `WARRANT_AUTH_SECRET`) could open the database
 * too; the token grants nothing more. Lifetime: two minutes, minted per command.
 */
import { randomUUID } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";

export const OPERATOR_TOKEN_AUDIENCE = "warrant-operator";
const ISSUER = "warrant-cli";
const SUBJECT = "operator";
const TTL_SECONDS = 120;

export async function mintOperatorToken(secret: Uint8Array): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setAudience(OPERATOR_TOKEN_AUDIENCE)
    .setSubject(SUBJECT)
    .setIssuedAt()
    .setExpirationTime(`${TTL_SECONDS}s`)
    .setJti(randomUUID())
    .sign(secret);
}

/** True only for an operator token signed with `secret`, unexpired, with a lifetime within policy. Never throws. */
export async function verifyOperatorToken(secret: Uint8Array, header: string | undefined): Promise<boolean> {
  const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i.exec(header?.trim() ?? "");
  if (!match?.[1] || match[1].length > 4096) return false;
  try {
    const { payload } = await jwtVerify(match[1], secret, {
      algorithms: ["HS256"],
      issuer: ISSUER,
      audience: OPERATOR_TOKEN_AUDIENCE,
      subject: SUBJECT,
      clockTolerance: 5,
    });
    return (
      typeof payload.exp === "number" && typeof payload.iat === "number" && payload.exp - payload.iat <= TTL_SECONDS
    );
  } catch {
    return false;
  }
}
