/**
 * `npm run tools -- list` shows every contracted tool: its server, risk,
 * whether the server serves it now, and its pin state and hash.
 * `npm run tools -- diff NAME` lists NAME's server again now and shows how
 * the definition it serves differs from the pin; `npm run tools -- approve
 * NAME [--by WHO]` pins the definition diff showed (an audit event records
 * who approved which hash). While `npm start` of this checkout runs, all
 * three go through its operator routes (its host lists the server again, and
 * the tool is offered again at once after an approval); otherwise the command
 * connects to the MCP server itself. A tool whose contract pins a hash
 * (`"pin": "sha256:…"`) is governed by the config: diff shows the configured
 * hash, and approve refuses (change the pin instead). Hashes are printed as
 * `sha256:<hex>`, the form a config `pin` takes.
 * `npm run tools -- disconnect SERVER --user ID` removes the OAuth tokens ID
 * holds for SERVER (src/cli/tools-disconnect.ts).
 * Exit 0 on success, 1 when there is nothing to diff, approve or disconnect
 * (or on a configuration or database error), 2 on a usage error.
 */
import os from "node:os";
import { loadSettings } from "../env.js";
import { configuredHash, manifestDiff, type ToolPin } from "../mcp/pins.js";
import { renderToolStatus, withPrefix } from "../mcp/tool-report.js";
import { loadConfig } from "../policy/config.js";
import { commandLine, usageError } from "./command-line.js";
import { exitOnConfigError } from "./config-errors.js";
import { toolsBackend } from "./tools-backend.js";
import { connectHost } from "./tools-connect.js";
import { disconnect, validUserId } from "./tools-disconnect.js";
import { TOOLS_USAGE as USAGE } from "./usage.js";

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

async function main(argv: string[]): Promise<number> {
  const options = { by: { type: "string" }, json: { type: "boolean" }, user: { type: "string" } } as const;
  const parsed = commandLine(argv, options, USAGE);
  if (typeof parsed === "number") return parsed;
  const [command, name, ...extra] = parsed.positionals;
  const user = parsed.values["user"];
  if (command === "disconnect") {
    if (name === undefined || !NAME.test(name) || extra.length > 0)
      return usageError("expected `disconnect SERVER --user ID`", USAGE);
    if (parsed.values["by"] !== undefined || parsed.values["json"] !== undefined)
      return usageError("disconnect takes --user only", USAGE);
    if (typeof user !== "string" || !validUserId(user))
      return usageError("disconnect needs --user ID, 1..64 of a-z 0-9 _ -", USAGE);
    return exitOnConfigError(async () => {
      const settings = loadSettings();
      return disconnect(settings, await loadConfig(settings.configPath), name, user);
    });
  }
  if (command === "connect") {
    if (name === undefined || !NAME.test(name) || extra.length > 0)
      return usageError("expected `connect SERVER`", USAGE);
    if (Object.values(parsed.values).some((value) => value !== undefined))
      return usageError("connect takes no options", USAGE);
    return exitOnConfigError(async () => {
      const settings = loadSettings();
      return connectHost(settings, await loadConfig(settings.configPath), name);
    });
  }
  if (user !== undefined) return usageError("--user belongs to disconnect", USAGE);
  const named = (command === "diff" || command === "approve") && name !== undefined && NAME.test(name);
  if (!(named || (command === "list" && name === undefined)) || extra.length > 0) {
    return usageError("expected `list`, `diff NAME`, `approve NAME` or `disconnect SERVER --user ID`", USAGE);
  }
  const by = parsed.values["by"];
  const approver = typeof by === "string" ? by : os.userInfo().username;
  if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(approver)) {
    process.stderr.write("warrant: usage: --by must be 1..64 of A-Z a-z 0-9 _ . @ -\n");
    return 2;
  }
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    const config = await loadConfig(settings.configPath);
    const backend = await toolsBackend(settings, config);
    try {
      if (command === "list") {
        const rows = await backend.list();
        process.stdout.write(`${parsed.values["json"] === true ? JSON.stringify(rows) : renderToolStatus(rows)}\n`);
        return 0;
      }
      const tool = name as string;
      const configured = Object.hasOwn(config.tools, tool) ? configuredHash(config.tools[tool]?.pin) : undefined;
      const configuredLine = configured
        ? `  configured pin: sha256:${configured} (${settings.configPath}; it wins over the database's pin)`
        : undefined;
      let pin: ToolPin | undefined;
      if (command === "diff") {
        const current = await backend.current(tool);
        if (current.relisted !== true)
          process.stderr.write(
            `warrant: note: could not list the tool's server now (${current.relisted}); showing what was last served\n`,
          );
        pin = current.pin;
      } else pin = await backend.stored(tool);
      if (!pin) {
        process.stderr.write(`warrant: not_found: tool ${tool} has no pinned definition\n`);
        return 1;
      }
      if (pin.served_hash === null || pin.served_manifest === null) {
        const lines = [
          `${tool}: served as pinned (${withPrefix(pin.hash)})${command === "approve" ? "; nothing to approve" : ""}`,
          ...(configuredLine ? [configuredLine] : []),
        ];
        process.stdout.write(`${lines.join("\n")}\n`);
        return command === "approve" ? 1 : 0;
      }
      if (command === "diff") {
        process.stdout.write(`${diffLines(pin, configuredLine).join("\n")}\n`);
        return 0;
      }
      if (configured) {
        process.stderr.write(
          `warrant: config_pinned: ${tool} is pinned in ${settings.configPath}; ` +
            `to accept the served definition set its "pin" to sha256:${pin.served_hash}\n`,
        );
        return 1;
      }
      const approved = await backend.approve(tool, approver, pin.served_hash);
      if (!approved) {
        process.stderr.write(`warrant: conflict: the definition of ${tool} changed again; run diff first\n`);
        return 1;
      }
      process.stdout.write(`${tool}: pinned ${withPrefix(approved.hash)} (approved by ${approver})\n`);
      return 0;
    } finally {
      await backend.close();
    }
  });
}

function diffLines(pin: ToolPin, configuredLine: string | undefined): string[] {
  const lines = [
    `${pin.tool} (server ${pin.server}): pinned ${withPrefix(pin.hash)} (${pin.pinned_at}), ` +
      `served ${withPrefix(pin.served_hash)} (${pin.served_at ?? "?"})`,
  ];
  if (configuredLine) lines.push(configuredLine);
  if (pin.manifest === null || pin.served_manifest === null)
    lines.push("  the configured definition has not been served to this host: only its hash is known");
  else
    for (const entry of manifestDiff(pin.manifest, pin.served_manifest))
      lines.push(`  ${entry.field}:`, `    - ${entry.pinned}`, `    + ${entry.served}`);
  return lines;
}

process.exitCode = await main(process.argv.slice(2));
