/**
 * What an OAuth-protected server asks of a user: the owner the host itself
 * acts as, the error that carries the authorization URL for an owner, and
 * the callback that completes an authorization as a browser would. The MCP
 * transport that raises them is src/mcp/oauth-connection.ts.
 */
/** The owner the host lists tools and probes as. */
export const HOST_OWNER = "warrant-host";

/** Completes an authorization as the user's browser would: visits `url`, returns the code it was redirected with. */
export type Authorize = (request: { server: string; owner: string; url: URL }) => Promise<string>;
