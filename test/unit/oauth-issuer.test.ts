/**
 * RFC 9207 (`iss` on an authorization response), as `checkIssuer` applies it
 * before a code is exchanged: present must equal the server's `issuer`
 * exactly; absent is refused only when the server says it always sends one.
 */
import { describe, expect, it } from "vitest";
import { isIssuerMismatch } from "../../src/errors.js";
import { checkIssuer } from "../../src/oauth/issuer.js";

const ISSUER = "https://auth.example.edu/";
const mismatch = (metadata: Parameters<typeof checkIssuer>[0], iss: string | undefined) => {
  try {
    checkIssuer(metadata, iss);
    return false;
  } catch (error) {
    return isIssuerMismatch(error);
  }
};

describe("checkIssuer (RFC 9207)", () => {
  it("accepts the server's own issuer, and a missing iss from a server that does not promise one", () => {
    expect(mismatch({ issuer: ISSUER }, ISSUER)).toBe(false);
    expect(mismatch({ issuer: ISSUER, authorization_response_iss_parameter_supported: true }, ISSUER)).toBe(false);
    expect(mismatch({ issuer: ISSUER }, undefined)).toBe(false);
    expect(mismatch(undefined, undefined)).toBe(false);
  });

  it("refuses another issuer, compared exactly (no normalization of case, slash or host)", () => {
    for (const iss of [
      "https://attacker.example/",
      "https://auth.example.edu",
      "https://AUTH.example.edu/",
      `${ISSUER}x`,
      "",
      "\u0000",
    ])
      expect(mismatch({ issuer: ISSUER }, iss), JSON.stringify(iss)).toBe(true);
  });

  it("refuses a missing iss when the server promises one, and any iss when its metadata names no issuer", () => {
    expect(mismatch({ issuer: ISSUER, authorization_response_iss_parameter_supported: true }, undefined)).toBe(true);
    expect(mismatch({}, ISSUER)).toBe(true);
    expect(mismatch(undefined, ISSUER)).toBe(true);
  });
});
