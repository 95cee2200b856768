/**
 * The little of `oidc-provider`'s API the sign-in tests use (the package
 * ships no types, and `@types/oidc-provider` would be a new dependency).
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface ProviderContext {
    oidc: {
      result?: { consent?: { grantId?: string } };
      session?: { grantIdFor(clientId: string): string | undefined };
      client?: { clientId: string };
      provider: Provider;
    };
  }

  interface Model {
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    Client: { find(id: string): Promise<unknown> };
    Grant: { find(id: string): Promise<unknown> };
    AccessToken: new (
      properties: Record<string, unknown>,
    ) => Model;
    ResourceServer: new (
      identifier: string,
      properties: Record<string, unknown>,
    ) => unknown;
  }
  export type { ProviderContext };
}
