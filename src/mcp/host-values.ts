/**
 * Host values in a server's environment. A stdio server's `env` (or an HTTP
 * server's `launch.env`) may name a value of the host by a whole-value
 * placeholder, e.g. `"WARRANT_CALENDAR_DATABASE_URL": "${DATABASE_URL}"`:
 * the child gets the host's own setting (the database it uses), and nothing
 * at all when the host has none (so the child falls back to its default).
 *
 * Children never inherit `DATABASE_URL` (see `childEnvironment`); this is the
 * one way to hand it to a server, and only to one the operator names.
 */
import type { ServerConfig, WarrantConfig } from "../policy/config.js";

/** The host values a placeholder may name: its database, and its data directory (absolute; where the calendar file goes). */
export const HOST_VALUE_NAMES = ["DATABASE_URL", "WARRANT_DATA_DIR"] as const;
export type HostValueName = (typeof HOST_VALUE_NAMES)[number];
export type HostValues = Partial<Record<HostValueName, string | undefined>>;

const PLACEHOLDER = /^\$\{([A-Z_][A-Z0-9_]*)\}$/;

/** An environment with placeholders replaced; a placeholder of an unset (or unknown) value drops the variable. */
export function resolveEnvironment(environment: Record<string, string>, values: HostValues): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(environment)) {
    const match = PLACEHOLDER.exec(value);
    if (match === null) {
      result[key] = value;
      continue;
    }
    const name = match[1] as string;
    const resolved = (HOST_VALUE_NAMES as readonly string[]).includes(name) ? values[name as HostValueName] : undefined;
    if (resolved !== undefined && resolved !== "") result[key] = resolved;
  }
  return result;
}

function resolveServer(server: ServerConfig, values: HostValues): ServerConfig {
  if (server.transport === "stdio") return { ...server, env: resolveEnvironment(server.env, values) };
  return server.launch
    ? { ...server, launch: { ...server.launch, env: resolveEnvironment(server.launch.env, values) } }
    : server;
}

/** The config with every server's environment resolved against the host's values. */
export function withHostValues(config: WarrantConfig, values: HostValues): WarrantConfig {
  return {
    ...config,
    servers: Object.fromEntries(
      Object.entries(config.servers).map(([name, server]) => [name, resolveServer(server, values)]),
    ),
  };
}
