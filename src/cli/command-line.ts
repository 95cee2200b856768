/**
 * The operator commands' shared command line: strict flags, `--help`/`-h`,
 * and one `warrant: usage: …` line (exit 2) for anything else.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Run ids are UUIDs from plan or the API; anything up to 128 such characters is looked up. */
export const RUN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface CommandLine {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** The parsed command line, or the exit code when it was `--help` (0, usage printed) or malformed (2, one usage line). */
export function commandLine(argv: string[], options: Options, usage: string): CommandLine | number {
  let parsed: CommandLine;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    }) as CommandLine;
  } catch (error) {
    return usageError((error as Error).message, usage);
  }
  if (parsed.values["help"] === true) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  return parsed;
}

/** Writes one usage error and the usage; exit 2. */
export function usageError(message: string, usage: string): number {
  process.stderr.write(`warrant: usage: ${message}\n${usage}\n`);
  return 2;
}
