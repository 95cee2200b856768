/**
 * SQL identifiers the code builds from configuration (the database schema
 * name). A leaf below every store, so auth/ and stores/ can both use it
 * without importing each other.
 */
import { ConfigError } from "./errors.js";

/** Lower-case Postgres identifier of at most 63 bytes: safe to quote, never needs escaping. */
const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The schema name as a quoted SQL identifier.
 * Throws `ConfigError("config_invalid")` for anything outside `^[a-z_][a-z0-9_]{0,62}$`.
 */
export function quoteSchemaName(schema: string): string {
  if (!SCHEMA_NAME_PATTERN.test(schema)) {
    throw new ConfigError(
      "config_invalid",
      `database schema name ${JSON.stringify(schema)} must match ${SCHEMA_NAME_PATTERN.source}`,
    );
  }
  return `"${schema}"`;
}
