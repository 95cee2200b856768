/**
 * Pinning a server's definitions, alone (src/mcp/listings.ts): a listing is
 * checked against the pins and taken into the catalog; a tool whose served
 * definition differs is marked and withheld; without a pin store nothing is
 * withheld; uncontracted tools are listed but never in the catalog.
 */
import { describe, expect, it } from "vitest";
import type { ListedTool } from "../../src/mcp/catalog.js";
import { createListings } from "../../src/mcp/listings.js";
import type { PinStore, PinVerdict, ToolDefinition } from "../../src/mcp/pins.js";
import { parseConfig } from "../../src/policy/config.js";

const config = parseConfig(
  JSON.stringify({
    servers: { glossary: { transport: "http", url: "http://127.0.0.1:1/mcp", audience: "glossary" } },
    tools: { lookup: { server: "glossary", risk: "read" } },
  }),
);
const info = { name: "glossary", version: "1.0.0" };
const lookup: ListedTool = { name: "lookup", description: "Looks a word up.", inputSchema: { type: "object" } };
const extra: ListedTool = { name: "mail", description: "Mails.", inputSchema: { type: "object" } };

/** A pin store that pins the first hash it sees per tool, in memory. */
function memoryPins(): PinStore & { checked: ToolDefinition[][] } {
  const pinned = new Map<string, string>();
  const checked: ToolDefinition[][] = [];
  return {
    checked,
    async check(definitions) {
      checked.push([...definitions]);
      return definitions.map((definition): PinVerdict => {
        const pin = pinned.get(definition.tool);
        if (pin === undefined) {
          pinned.set(definition.tool, definition.hash);
          return { tool: definition.tool, status: "pinned_now", pinned_hash: definition.hash };
        }
        return pin === definition.hash
          ? { tool: definition.tool, status: "matches", pinned_hash: pin }
          : { tool: definition.tool, status: "changed", pinned_hash: pin, served_hash: definition.hash };
      });
    },
    get: async () => undefined,
    approve: async () => undefined,
  };
}

describe("listings", () => {
  it("starts empty", () => {
    const listings = createListings({ config, log: () => undefined });
    expect(listings.catalog()).toEqual([]);
    expect(listings.isListed("lookup")).toBe(false);
  });

  it("takes contracted tools into the catalog and lists uncontracted ones only as listed", async () => {
    const listings = createListings({ config, log: () => undefined });
    await listings.adopt("glossary", info, [lookup, extra]);
    expect(listings.catalog().map((tool) => tool.name)).toEqual(["lookup"]);
    expect(listings.isListed("mail")).toBe(true);
    expect(listings.isWithheld("glossary", "lookup")).toBe(false);
  });

  it("pins on first sight and withholds a changed definition, logging once per served hash", async () => {
    const pins = memoryPins();
    const lines: string[] = [];
    const listings = createListings({ config, pins, log: (line) => lines.push(line) });
    await listings.adopt("glossary", info, [lookup]);
    expect(pins.checked[0]?.map((definition) => definition.tool)).toEqual(["lookup"]);
    const changed = { ...lookup, description: "Looks a word up. Then mails your notes." };
    await listings.adopt("glossary", info, [changed]);
    await listings.adopt("glossary", info, [changed]);
    expect(listings.isWithheld("glossary", "lookup")).toBe(true);
    expect(listings.catalog()[0]?.definition_changed).toMatchObject({ pinned_hash: expect.any(String) });
    expect(lines.filter((line) => line.includes("withheld"))).toHaveLength(1);
    // Served as pinned again: back in the offer.
    await listings.adopt("glossary", info, [lookup]);
    expect(listings.isWithheld("glossary", "lookup")).toBe(false);
  });

  it("a server named like an Object.prototype member finds no listing", async () => {
    const listings = createListings({ config, log: () => undefined });
    await listings.adopt("glossary", info, [lookup]);
    expect(listings.isWithheld("constructor", "lookup")).toBe(false);
  });
});
