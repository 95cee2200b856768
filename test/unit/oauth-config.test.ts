/**
 * `auth` of a server in warrant.config.json (src/oauth/config.ts):
 * valid shapes parse; a literal secret, a grant without what it needs, an
 * http CIMD URL, a launched OAuth server and hostile scopes are config errors
 * naming the problem.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/policy/config.js";
import { CROSS_APP_ACCESS_REFUSED, credentialNames } from "../../src/oauth/config.js";

const configWith = (auth: Record<string, unknown>, server: Record<string, unknown> = {}) =>
  JSON.stringify({
    servers: {
      tickets: { transport: "http", url: "https://tickets.example/mcp", audience: "tickets", auth, ...server },
    },
    tools: {},
  });

const code = { type: "oauth", grant: "authorization_code", redirect_uri: "https://warrant.example/oauth/callback" };
const credentials = { type: "oauth", grant: "client_credentials", client_id: "warrant", client_secret: "${SECRET}" };

function errorOf(text: string): string {
  try {
    parseConfig(text);
  } catch (error) {
    expect(error).toMatchObject({ code: "config_invalid" });
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error("parsed");
}

describe("OAuth server config", () => {
  it("parses authorization_code (DCR or CIMD) and client_credentials (secret or key)", () => {
    expect(parseConfig(configWith(code)).servers["tickets"]).toMatchObject({ auth: { max_authorization_attempts: 3 } });
    parseConfig(configWith({ ...code, client_metadata_url: "https://warrant.example/client.json" }));
    parseConfig(configWith(credentials));
    parseConfig(configWith({ ...credentials, client_secret: undefined, private_key: "${KEY}" }));
    const config = parseConfig(configWith(credentials));
    expect(credentialNames(config.servers)).toEqual(["SECRET"]);
  });

  it("refuses a secret written in the file", () => {
    expect(errorOf(configWith({ ...credentials, client_secret: "s3cr3t" }))).toMatch(/environment variable/);
  });

  it("refuses a grant without what it needs", () => {
    expect(errorOf(configWith({ ...credentials, client_id: undefined }))).toMatch(/client_id/);
    expect(errorOf(configWith({ ...credentials, client_secret: undefined }))).toMatch(/client_secret or a private_key/);
    expect(errorOf(configWith({ ...code, redirect_uri: undefined }))).toMatch(/redirect_uri/);
    expect(errorOf(configWith({ ...credentials, token_endpoint_auth_method: "none" }))).toMatch(/authentication/);
  });

  it("refuses an http Client ID Metadata Document, a launched OAuth server, unknown keys and hostile scopes", () => {
    expect(errorOf(configWith({ ...code, client_metadata_url: "http://warrant.example/c.json" }))).toMatch(/https/);
    expect(errorOf(configWith(code, { url: undefined, launch: { command: "node", args: ["server.js"] } }))).toMatch(
      /remote/,
    );
    expect(errorOf(configWith({ ...code, token: "abc" }))).toBeTruthy();
    expect(errorOf(configWith({ ...code, scopes: ["read write"] }))).toMatch(/scope/);
    expect(errorOf(configWith({ ...code, scopes: ["a\u0000"] }))).toMatch(/scope/);
    expect(errorOf(configWith({ ...code, max_authorization_attempts: 10 }))).toBeTruthy();
  });

  it("parses authorization_code with a pre-registered client id and secret (no registration)", () => {
    const config = parseConfig(configWith({ ...code, client_id: "pre-registered-client", client_secret: "${SECRET}" }));
    expect(config.servers["tickets"]).toMatchObject({ auth: { client_id: "pre-registered-client" } });
    expect(credentialNames(config.servers)).toEqual(["SECRET"]);
  });

  it("refuses cross-app access (ID-JAG token exchange, jwt-bearer) by design, whatever the grant is called", () => {
    for (const grant of [
      "cross_app_access",
      "jwt_bearer",
      "token_exchange",
      "urn:ietf:params:oauth:grant-type:jwt-bearer",
      "urn:ietf:params:oauth:grant-type:token-exchange",
    ]) {
      const message = errorOf(configWith({ ...credentials, grant }));
      expect(message).toContain("servers.tickets.auth.grant");
      expect(message).toContain(CROSS_APP_ACCESS_REFUSED);
    }
  });

  it("refuses an unknown, wrong-typed or oversized grant as config_invalid, not as cross-app access", () => {
    for (const grant of ["password", 7, null, ["authorization_code"], { jwt: true }, "x".repeat(100_000)]) {
      const message = errorOf(configWith({ ...credentials, grant }));
      expect(message).toContain("servers.tickets.auth.grant");
      expect(message).not.toContain(CROSS_APP_ACCESS_REFUSED);
      expect(message.length).toBeLessThan(400);
    }
  });
});
