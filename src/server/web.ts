/**
 * The chat page (`web/`, built by `scripts/build-web.mjs` into `web/dist`)
 * and the few routes only the page needs:
 *
 * - `GET /` and `GET /assets/<file>`: the built page, without a token (the
 *   page itself asks for one; every API route still needs it).
 * - `GET /ui/sign-in` (no token): `{dev_login, oidc}`, so the page knows whether to
 *   offer the dev principal picker without probing a route that may 401, and
 *   which OpenID Connect issuers it may sign in with (public facts only: the
 *   issuer URL, the page's public client id, scopes, resource indicator).
 * - `GET /dev/principals`, `POST /dev/token {user}`: the dev sign-in, which
 *   mints a token for anyone who asks. Served only when `WARRANT_DEV_LOGIN=1`
 *   (then the server warns at start), or, with it unset, when the server
 *   listens on a loopback address and runs on the shipped dev principal
 *   directory. Otherwise both are 404 before any token check.
 * - `GET /ui/session` (token required): who the token is, the run budgets,
 *   and the JSON schemas of the tools the principal may use, from which the
 *   page builds its approval edit forms.
 */
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import path from "node:path";
import type { Context, Hono } from "hono";
import { z } from "zod";
import { mintApiToken } from "../auth/api-token.js";
import { loadPrincipalDirectory, type Principal } from "../auth/principal.js";
import { loadSettings, REPO_ROOT, type Budgets, type Settings } from "../env.js";
import type { ToolHost } from "../mcp/tool-host.js";
import { REVIEWER_SCOPE } from "../policy/approval.js";
import type { OidcConfig } from "../auth/oidc-config.js";
import type { Env } from "./context.js";

/** The directory shipped with the repository (the default of WARRANT_PRINCIPALS); only it enables the dev sign-in routes. */
export function shippedPrincipalsPath(): string {
  // Settings of an empty environment: the defaults, so the path is named in env.ts only.
  return loadSettings({}).principalsPath;
}
/** Where `scripts/build-web.mjs` writes the page. */
export const WEB_DIST_DIR = path.join(REPO_ROOT, "web/dist");
/** Dev tokens are short-lived: a sign-in for one sitting. */
const DEV_TOKEN_TTL_SECONDS = 4 * 3600;
/** Asset names Vite writes (`index-<hash>.js`); anything else, `..` included, is not an asset. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

export interface WebOptions {
  distDir: string;
  /** The directory the dev sign-in mints from (read at each request); unset means no dev sign-in. */
  devPrincipals: string | undefined;
  secret: Uint8Array;
  budgets: Budgets;
  tools: () => Promise<ToolHost>;
  /** The issuers the page signs in with (those of `auth.oidc` that name a `client_id`). */
  oidc?: SignInIssuer[];
}

/** What the page needs to sign in with an issuer: authorization code + PKCE as a public client. */
export interface SignInIssuer {
  issuer: string;
  client_id: string;
  scopes: string[];
  resource?: string;
}

/** The issuers of `auth.oidc` the page can offer (a `client_id` is what makes an issuer one to sign in with). */
export function signInIssuers(oidc: OidcConfig | undefined): SignInIssuer[] {
  return (oidc?.issuers ?? []).flatMap((issuer) =>
    issuer.client_id === undefined
      ? []
      : [
          {
            issuer: issuer.issuer,
            client_id: issuer.client_id,
            scopes: issuer.scopes.includes("openid") ? issuer.scopes : ["openid", ...issuer.scopes],
            ...(issuer.resource ? { resource: issuer.resource } : {}),
          },
        ],
  );
}

/** Whether `host` (a HOST setting) names only this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return /^(0{0,4}:){7}0{0,3}1$|^::1$/i.test(bare) || /^::ffff:127\./i.test(bare);
  return false;
}

/** Whether the dev sign-in is served: `WARRANT_DEV_LOGIN` when set, else loopback HOST with the shipped directory. */
export function devLoginEnabled(settings: Settings): boolean {
  if (settings.server.devLogin !== undefined) return settings.server.devLogin;
  return isLoopbackHost(settings.server.host) && path.resolve(settings.principalsPath) === shippedPrincipalsPath();
}

/** The page's options for a server on `settings`. */
export async function webOptions(
  settings: Settings,
  secret: Uint8Array,
  tools: () => Promise<ToolHost>,
  oidc?: OidcConfig,
): Promise<WebOptions> {
  const devPrincipals = devLoginEnabled(settings) ? settings.principalsPath : undefined;
  // A broken directory fails at start, not at the first sign-in.
  if (devPrincipals) await loadPrincipalDirectory(devPrincipals);
  return {
    distDir: WEB_DIST_DIR,
    devPrincipals,
    secret,
    budgets: settings.budgets,
    tools,
    oidc: signInIssuers(oidc),
  };
}

export const DevTokenRequest = z.object({ user: z.string().min(1).max(64) }).strict();

const failure = (c: Context<Env>, status: 400 | 404 | 422 | 503, code: string, message: string) =>
  c.json({ error: code, message }, status);

/** Routes that answer without a token: register before the authentication middleware. */
export function registerPageRoutes(app: Hono<Env>, options: WebOptions): void {
  app.get("/", async (c) => {
    const html = await readOptional(path.join(options.distDir, "index.html"));
    if (html === undefined)
      return failure(
        c,
        503,
        "page_not_built",
        "the chat page is not built: run npm start (or node scripts/build-web.mjs)",
      );
    c.header("Cache-Control", "no-cache");
    return c.html(html.toString("utf8"));
  });
  app.get("/assets/:file", async (c) => {
    const name = c.req.param("file");
    const type = CONTENT_TYPES[path.extname(name)];
    const body =
      ASSET_NAME.test(name) && type ? await readOptional(path.join(options.distDir, "assets", name)) : undefined;
    if (body === undefined || type === undefined) return failure(c, 404, "not_found", "no such asset");
    // Vite puts a content hash in every asset name, so a name never changes meaning.
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    c.header("Content-Type", type);
    return c.body(new Uint8Array(body));
  });
  const directoryPath = options.devPrincipals;
  const issuers = options.oidc ?? [];
  // `oidc` only when there is an issuer: without `auth.oidc` the answer is what it always was.
  app.get("/ui/sign-in", (c) =>
    c.json({ dev_login: directoryPath !== undefined, ...(issuers.length > 0 ? { oidc: issuers } : {}) }),
  );
  if (!directoryPath) {
    // Not served: 404 before the token check, so nothing tells a caller more than "no such route".
    app.all("/dev/*", (c) => failure(c, 404, "not_found", "no such route"));
    return;
  }
  // Read at each request: a user removed from the directory cannot sign in any more.
  const current = (): Promise<Map<string, Principal>> => loadPrincipalDirectory(directoryPath);
  app.get("/dev/principals", async (c) =>
    c.json({
      principals: [...(await current()).values()].map((principal) => ({
        user_id: principal.user_id,
        display_name: principal.display_name ?? principal.user_id,
        role: principal.role,
        tenant: principal.tenant,
      })),
    }),
  );
  app.post("/dev/token", async (c) => {
    let json: unknown;
    try {
      json = await c.req.json();
    } catch {
      return failure(c, 400, "invalid_json", "the body is not JSON");
    }
    const parsed = DevTokenRequest.safeParse(json);
    if (!parsed.success) return failure(c, 422, "invalid_request", 'expected {"user": "<dev principal id>"}');
    // A Map lookup: a client-sent name never reaches a prototype property.
    const principal = (await current()).get(parsed.data.user);
    if (!principal) return failure(c, 404, "principal_unknown", `no dev principal "${parsed.data.user}"`);
    const token = await mintApiToken(options.secret, principal, { ttlSeconds: DEV_TOKEN_TTL_SECONDS });
    return c.json({ token, expires_in: DEV_TOKEN_TTL_SECONDS });
  });
}

/** Routes for a signed-in page: register after the authentication middleware. */
export function registerSessionRoutes(app: Hono<Env>, options: WebOptions): void {
  app.get("/ui/session", async (c) => {
    const principal = c.get("principal");
    // A reviewer edits other users' actions too, so sees every tool's schema; others only their own tools'.
    const reviewer = principal.scopes.includes(REVIEWER_SCOPE);
    const tools = (await options.tools())
      .catalog()
      .filter((tool) => reviewer || tool.contract.scopes.every((scope) => principal.scopes.includes(scope)))
      .map((tool) => ({
        name: tool.name,
        server: tool.server,
        risk: tool.contract.risk,
        description: tool.description,
        schema: tool.model_schema,
      }));
    return c.json({
      principal: {
        user_id: principal.user_id,
        display_name: principal.display_name ?? principal.user_id,
        tenant: principal.tenant,
        role: principal.role,
        scopes: principal.scopes,
      },
      budgets: options.budgets,
      tools,
    });
  });
}

async function readOptional(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR")
      return undefined;
    throw error;
  }
}
