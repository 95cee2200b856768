/**
 * `npm run tools -- diff NAME` shows how the definition a server now serves
 * for tool NAME differs from its pin; `npm run tools -- approve NAME [--by
 * WHO]` pins the served definition (an audit event records who approved
 * which hash). A running host offers the tool again the next time it lists
 * that server's tools (a restart, a reconnect, or list_changed). A tool whose
 * contract pins a hash (`"pin": "sha256:…"`) is governed by the config: diff
 * shows the configured hash, and approve refuses (change the pin instead).
 * Exit 0 on success, 1 when there is nothing to diff or approve (or on a
 * configuration or database error), 2 on a usage error.
 */
import os from "node:os";
import { loadSettings } from "../env.js";
import { configuredHash, manifestDiff } from "../mcp/pins.js";
import { openDatabase } from "../persistence/database.js";
import { loadConfig } from "../policy/config.js";
import { commandLine, usageError } from "./command-line.js";
import { exitOnConfigError } from "./config-errors.js";

const USAGE = `usage: npm run tools -- diff NAME
       npm run tools -- approve NAME [--by WHO]
  diff     what changed in the definition the server serves for tool NAME since it was pinned
  approve  pin the served definition of NAME (WHO defaults to the OS user)`;

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

async function main(argv: string[]): Promise<number> {
  const parsed = commandLine(argv, { by: { type: "string" } }, USAGE);
  if (typeof parsed === "number") return parsed;
  const [command, name, ...extra] = parsed.positionals;
  if ((command !== "diff" && command !== "approve") || name === undefined || !NAME.test(name) || extra.length > 0) {
    return usageError("expected `diff NAME` or `approve NAME`", USAGE);
  }
  const by = parsed.values["by"];
  const approver = typeof by === "string" ? by : os.userInfo().username;
  if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(approver)) {
    process.stderr.write("warrant: usage: --by must be 1..64 of A-Z a-z 0-9 _ . @ -\n");
    return 2;
  }
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    const contracts = (await loadConfig(settings.configPath)).tools;
    const configured = Object.hasOwn(contracts, name) ? configuredHash(contracts[name]?.pin) : undefined;
    const configuredLine = configured
      ? `  configured pin: sha256:${configured} (${settings.configPath}; it wins over the database's pin)`
      : undefined;
    const database = await openDatabase({
      ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
      dataDir: settings.dataDir,
    });
    try {
      const pin = await database.pins.get(name);
      if (!pin) {
        process.stderr.write(`warrant: not_found: tool ${name} has no pinned definition\n`);
        return 1;
      }
      if (pin.served_hash === null || pin.served_manifest === null) {
        const lines = [
          `${name}: served as pinned (${pin.hash})${command === "approve" ? "; nothing to approve" : ""}`,
          ...(configuredLine ? [configuredLine] : []),
        ];
        process.stdout.write(`${lines.join("\n")}\n`);
        return command === "approve" ? 1 : 0;
      }
      if (command === "diff") {
        const lines = [
          `${name} (server ${pin.server}): pinned ${pin.hash} (${pin.pinned_at}), served ${pin.served_hash} (${pin.served_at ?? "?"})`,
        ];
        if (configuredLine) lines.push(configuredLine);
        if (pin.manifest === null)
          lines.push("  the configured definition has not been served to this host: only its hash is known");
        else
          for (const entry of manifestDiff(pin.manifest, pin.served_manifest))
            lines.push(`  ${entry.field}:`, `    - ${entry.pinned}`, `    + ${entry.served}`);
        process.stdout.write(`${lines.join("\n")}\n`);
        return 0;
      }
      if (configured) {
        process.stderr.write(
          `warrant: config_pinned: ${name} is pinned in ${settings.configPath}; to accept the served definition set its "pin" to sha256:${pin.served_hash}\n`,
        );
        return 1;
      }
      const approved = await database.pins.approve(name, approver, pin.served_hash);
      if (!approved) {
        process.stderr.write(`warrant: conflict: the definition of ${name} changed again; run diff first\n`);
        return 1;
      }
      process.stdout.write(`${name}: pinned ${approved.hash} (approved by ${approver})\n`);
      return 0;
    } finally {
      await database.close();
    }
  });
}

process.exitCode = await main(process.argv.slice(2));
