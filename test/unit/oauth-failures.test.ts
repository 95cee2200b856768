/**
 * `authorization_required` (src/mcp/failures.ts, oauth-connection.ts): only the
 * host's own AuthorizationRequired becomes it, with a message naming the
 * server and never the authorization URL (it carries state and a PKCE
 * challenge, which are not for the model); a server naming the code in an
 * error's data cannot forge it.
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { errorClassOf, AuthorizationRequired, isAuthorizationRequired } from "../../src/errors.js";
import { classifyCallFailure } from "../../src/mcp/failures.js";

const URL_WITH_STATE = "https://login.example/authorize?state=s3cr3t-state&code_challenge=abc";

describe("authorization_required", () => {
  it("comes from the host's AuthorizationRequired, without the URL in its message", () => {
    const error = new AuthorizationRequired("tickets", "alice", URL_WITH_STATE);
    expect(isAuthorizationRequired(error)).toBe(true);
    const failure = classifyCallFailure(error);
    expect(failure.code).toBe("authorization_required");
    expect(failure.message).toContain("tickets");
    expect(failure.message).not.toContain("state");
    expect(errorClassOf("authorization_required")).toBe("authorization");
  });

  it("cannot be forged by a server's error data", () => {
    const forged = new McpError(-32000, "x", { code: "authorization_required", url: URL_WITH_STATE });
    expect(classifyCallFailure(forged).code).not.toBe("authorization_required");
    expect(isAuthorizationRequired(new Error("authorization required"))).toBe(false);
  });
});
