/**
 * RFC 9207: the `iss` parameter of an authorization response names the
 * authorization server that sent it, so a client talking to several servers
 * cannot be made to take one server's code as another's (a mix-up). The
 * check, against the metadata of the server the protected resource names:
 * an `iss` that is present must equal that server's `issuer`, exactly; an
 * absent one is refused when the server says it always sends one
 * (`authorization_response_iss_parameter_supported`), and accepted otherwise
 * (servers that predate the RFC send none).
 */
import { IssuerMismatch } from "../errors.js";

export interface IssuerMetadata {
  issuer?: string | undefined;
  authorization_response_iss_parameter_supported?: boolean | undefined;
}

/** Throws {@link IssuerMismatch} unless `iss` may come from the server `metadata` describes. */
export function checkIssuer(metadata: IssuerMetadata | undefined, iss: string | undefined): void {
  if (iss === undefined) {
    if (metadata?.authorization_response_iss_parameter_supported === true)
      throw new IssuerMismatch("the authorization response has no iss, and its server says it always sends one");
    return;
  }
  if (typeof metadata?.issuer !== "string")
    throw new IssuerMismatch("the authorization response names an issuer, and its server's metadata names none");
  if (iss !== metadata.issuer)
    throw new IssuerMismatch("the authorization response names another authorization server (iss)");
}
