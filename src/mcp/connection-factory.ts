/**
 * Builds a configured server's connection: stdio servers through the SDK's
 * stdio client, Streamable HTTP servers with task tokens minted per call from
 * the deployment's signing secret (the servers Warrant launches or controls).
 */
import { randomBytes } from "node:crypto";
import { mintTaskToken } from "../auth/task-token.js";
import type { ServerConfig } from "../policy/config.js";
import type { ConnectionEvents, ServerConnection } from "./connection.js";
import { httpConnection } from "./http-session.js";
import { stdioConnection } from "./stdio-session.js";

/** Task-token settings: the signing secret shared with HTTP servers we launch. */
export interface TokenSettings {
  secret: Uint8Array;
  ttlSeconds: number;
}

/** Mints a fresh secret when none is configured (it is handed to the servers we launch). */
export function ephemeralTokenSettings(): TokenSettings {
  return { secret: new Uint8Array(randomBytes(32)), ttlSeconds: 120 };
}

export type ConnectionFactory = (name: string, server: ServerConfig, events: ConnectionEvents) => ServerConnection;

export function connectionFactory(tokens: TokenSettings): ConnectionFactory {
  const secretHex = Buffer.from(tokens.secret).toString("hex");
  return (_name, server, events) =>
    server.transport === "stdio"
      ? stdioConnection(server, events)
      : httpConnection({
          server,
          mint: (request) =>
            mintTaskToken(
              tokens.secret,
              {
                audience: server.audience,
                tenant: request.tenant,
                subject: request.subject,
                task: request.task,
                scopes: [...request.scopes],
              },
              { ttlSeconds: tokens.ttlSeconds },
            ),
          launchEnvironment: { WARRANT_TASK_TOKEN_SECRET: secretHex },
          events,
        });
}
