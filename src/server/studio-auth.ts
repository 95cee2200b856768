/**
 * Custom auth for `npm run dev` (`langgraphjs dev` and LangGraph Studio),
 * loaded by the LangGraph API through `langgraph.json` `auth.path`.
 *
 * Authentication: `Authorization: Bearer <token>`, verified exactly as
 * `npm start` verifies it (src/auth/token-verifier.ts): the tokens
 * `npm run token` mints, with the same secret, and, when `auth.oidc` names
 * issuers, their tokens with the same claim mapping. The
 * user object carries the whole principal, because the API stamps it into
 * `configurable.langgraph_auth_user`, where the graph reads it through
 * `PrincipalSchema`.
 *
 * Authorization: a thread belongs to whoever created it (`metadata.owner` and
 * `metadata.tenant`, as `npm start` shows them); every thread and run
 * operation is filtered by both, so another user's thread looks the same as
 * a missing one. Assistants are a shared catalog
 * (the system `agent` and `workflow` plus any a user creates) that only their
 * creator may change. Any event not handled here (store, crons, future ones)
 * is refused.
 *
 * `npm run dev` is a debugging tool: the owner of a thread may still edit its
 * state and send `command.update`/`goto` (that is what Studio is for).
 * `npm start` is the hardened path.
 */
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { loadApiSecret } from "../auth/api-token.js";
import type { Principal } from "../auth/principal.js";
import { tokenVerifier, type TokenFailure, type TokenVerifier } from "../auth/token-verifier.js";
import { loadSettings } from "../env.js";
import { loadConfig } from "../policy/config.js";
import { HOST_OWNED_KEYS, stampVerifiedUser } from "../run-config.js";

/** What the API keeps as the request's user: the principal plus LangGraph's user fields. */
export type StudioUser = Principal & {
  /** `<tenant>:<user_id>`: user ids are only unique within a tenant. */
  identity: string;
  /** The principal's scopes (LangGraph's name for them). */
  permissions: string[];
  display_name: string;
  is_authenticated: boolean;
};

/** Keys through which a client could try to name a run's user. */
const IDENTITY_KEYS = HOST_OWNED_KEYS;

/** Builds the user object for a verified principal. */
export function studioUser(principal: Principal): StudioUser {
  return {
    ...principal,
    identity: `${principal.tenant}:${principal.user_id}`,
    permissions: [...principal.scopes],
    display_name: principal.display_name ?? principal.user_id,
    is_authenticated: true,
  };
}

// The API answers with `message` as the body verbatim, so it carries the same
// JSON error body as `npm start` (src/server/api-error.ts).
function unauthorized(code: TokenFailure, message: string): HTTPException {
  const challenge =
    code === "token_missing" ? 'Bearer realm="warrant"' : 'Bearer realm="warrant", error="invalid_token"';
  return new HTTPException(401, {
    message: JSON.stringify({ error: code, message }),
    headers: { "content-type": "application/json", "www-authenticate": challenge },
  });
}

function forbidden(code: string, message: string): HTTPException {
  return new HTTPException(403, {
    message: JSON.stringify({ error: code, message }),
    headers: { "content-type": "application/json" },
  });
}

/** The owner keys a thread carries in its metadata, and the filter on them. */
function ownedBy(user: StudioUser): { owner: string; tenant: string } {
  return { owner: user.user_id, tenant: user.tenant };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Sets the owner keys in place: the API reads the mutated value back (and `threads.copy` keeps its own object). */
function stampOwner(value: { metadata?: Record<string, unknown> | null | undefined }, user: StudioUser): void {
  value.metadata ??= {};
  Object.assign(value.metadata, ownedBy(user));
}

/** Removes identity keys a client put into an assistant's config or context. */
function scrubIdentity(record: unknown): void {
  if (!isRecord(record)) return;
  for (const key of IDENTITY_KEYS) delete record[key];
}

/** Keys that make the API trace a run to LangSmith (a client's `langsmith_tracer` lands here). */
const TRACING_KEYS = ["langsmith_project", "langsmith_example_id"] as const;

/**
 * Makes the run's identity the verified user's, whatever the client sent:
 * the API copies every `x-*` request header into `configurable` (our graph
 * reads none of them) and merges client `configurable`/`context` into the run.
 * Also keeps the run offline: no client-requested LangSmith tracing.
 */
function sanitizeRun(kwargs: Record<string, unknown>, user: StudioUser): void {
  if (!isRecord(kwargs["config"])) kwargs["config"] = {};
  const config = kwargs["config"] as Record<string, unknown>;
  if (!isRecord(config["configurable"])) config["configurable"] = {};
  const configurable = config["configurable"] as Record<string, unknown>;
  for (const key of Object.keys(configurable)) if (key.startsWith("x-")) delete configurable[key];
  for (const key of TRACING_KEYS) delete configurable[key];
  stampVerifiedUser(configurable, user);
  scrubIdentity(kwargs["context"]);
}

/** An identity provider that cannot be reached: 503, never an admission. */
function unavailable(message: string): HTTPException {
  return new HTTPException(503, {
    message: JSON.stringify({ error: "auth_unavailable", message }),
    headers: { "content-type": "application/json", "retry-after": "1" },
  });
}

/**
 * The auth object; `loadVerifier` supplies the token verifier (called on the
 * first authenticated request, again only if it failed).
 */
export function createStudioAuth(loadVerifier: () => Promise<TokenVerifier>) {
  let verifier: Promise<TokenVerifier> | undefined;
  const currentVerifier = () => {
    verifier ??= loadVerifier().catch((error: unknown) => {
      verifier = undefined;
      throw error;
    });
    return verifier;
  };
  return (
    new Auth()
      .authenticate<StudioUser>(async (request) => {
        // Test-only route of the dev server that wipes every user's threads.
        if (new URL(request.url).pathname.startsWith("/internal/")) {
          throw forbidden("route_disabled", "internal routes are disabled under Warrant auth");
        }
        const verified = await (await currentVerifier()).authenticate({
          authorization: request.headers.get("authorization"),
          apiKey: undefined,
        });
        if (!verified.ok && verified.code === "auth_unavailable") throw unavailable(verified.message);
        if (!verified.ok) throw unauthorized(verified.code, verified.message);
        return studioUser(verified.principal);
      })
      // Fail closed: store, crons and anything not named below.
      .on("*", () => {
        throw forbidden("not_permitted", "this resource is not available in Warrant's dev server");
      })
      .on("threads:create", ({ user, value }) => {
        stampOwner(value, user);
      })
      .on("threads:create_run", ({ user, value }) => {
        // A new thread created by this run takes the run's metadata.
        stampOwner(value, user);
        sanitizeRun(value.kwargs, user);
        return ownedBy(user);
      })
      .on("threads:update", ({ user, value }) => {
        // Metadata updates are merged into the thread's: the owner cannot be changed.
        if (value.metadata) stampOwner(value, user);
        return ownedBy(user);
      })
      .on(["threads:read", "threads:search", "threads:delete"], ({ user }) => ownedBy(user))
      .on("assistants:create", ({ user, value }) => {
        stampOwner(value, user);
        scrubIdentity(value.config?.configurable);
        scrubIdentity(value.context);
      })
      .on("assistants:update", ({ user, value }) => {
        if (value.metadata) stampOwner(value, user);
        scrubIdentity(value.config?.configurable);
        scrubIdentity(value.context);
        // System assistants have no owner, so nobody can change or delete them.
        return ownedBy(user);
      })
      .on("assistants:delete", ({ user }) => ownedBy(user))
      // The catalog is shared: a filter here would hide the system assistants.
      .on(["assistants:read", "assistants:search"], () => true)
  );
}

/**
 * What `langgraph.json` loads: the secret from `WARRANT_AUTH_SECRET` or
 * `<dataDir>/auth-secret` and the issuers of `auth.oidc`, like `npm start`.
 */
export const auth = createStudioAuth(async () => {
  const settings = loadSettings();
  const secret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
  return tokenVerifier({ secret, oidc: (await loadConfig(settings.configPath)).auth.oidc });
});
