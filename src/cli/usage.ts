/**
 * The operator commands' usage texts, as data: printed by `--help` and the source of docs/reference/cli.md
 * (`npm run docs`).
 */
import { DEFAULT_API_TOKEN_TTL_SECONDS, MAX_API_TOKEN_TTL_SECONDS } from "../auth/api-token.js";

export const AUDIT_USAGE = `usage: npm run audit -- verify [RUN_ID] [--json]
  Recomputes the audit chains of all runs (or of RUN_ID) and names the first broken link.`;

export const POLICY_USAGE = `usage: npm run policy -- check [--config FILE]
       npm run policy -- schema [--config FILE]
       npm run policy -- matrix [--config FILE] [--principals FILE] [--json]
       npm run policy -- explain RUN_ID [CALL_ID] [--json]
       npm run policy -- replay (RUN_ID… | --last N) [--config FILE] [--policies FILE[,FILE…]] [--engine builtin|cedar]
                            [--principals FILE] [--json]
  check    validate a config as the server does, every problem with its path (exit 1 on an error)
  schema   the Cedar schema (entity types, one action per contracted tool) for policy.cedar.schema
  matrix   per principal and stage: the tools offered, withheld and why, and who must review
  explain  a recorded run's proposals: the checks each passed, the one that refused it, review, execution
  replay   re-decide recorded proposals under another config, other Cedar policies (--policies, with the config's
           schema) or the other engine (--engine), and list the decisions that change
  Nothing is changed and no tool is called.`;

export const TOKEN_USAGE = `usage: npm run token -- --user <id> [--ttl <seconds>]
       npm run token -- --device [--issuer <url>]
       npm run token -- --revoke <jti>
       npm run token -- --revoke-user <id>
  --user         mints a bearer token for a principal of the directory (WARRANT_PRINCIPALS)
  --ttl          lifetime in seconds, 1..${MAX_API_TOKEN_TTL_SECONDS} (default ${DEFAULT_API_TOKEN_TTL_SECONDS})
  --device       signs in with the identity provider of auth.oidc (device authorization grant)
  --issuer       which issuer of auth.oidc (default: the first with a client_id)
  --revoke       revokes one token by its id (printed when it was minted)
  --revoke-user  revokes every token of the user issued until now`;

export const TOOLS_USAGE = `usage: npm run tools -- list [--json]
       npm run tools -- diff NAME
       npm run tools -- approve NAME [--by WHO]
       npm run tools -- disconnect SERVER --user ID
       npm run tools -- connect SERVER
  list     every tool: server, risk, whether it is served now, pin state and hash
  diff     what changed in the definition the server serves now for tool NAME since it was pinned
  approve  pin the served definition of NAME (WHO defaults to the OS user)
  disconnect  remove the OAuth tokens user ID holds for SERVER (the next call asks them to authorize again)
  connect  authorize the deployment to list SERVER's tools (an authorization_code server; runs still ask each owner)`;

export const TRACE_USAGE = `usage: npm run trace -- RUN_ID [--json] [--otlp]
  Prints one run's timeline from the database. --json: the trace as JSON.
  --otlp: also export it as OpenTelemetry spans to OTEL_EXPORTER_OTLP_ENDPOINT.`;
