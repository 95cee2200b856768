/**
 * The URLs the tests' eliciting server asks the user to open (URL-mode
 * elicitation, `open_consent_page(page)`): one good page on CONSENT_HOST
 * (`{id}` becomes the question's id) and hostile ones the host must refuse.
 */
export const CONSENT_HOST = "consent.warrant.test";

export const CONSENT_PAGES = {
  good: `https://${CONSENT_HOST}/connect?session={id}`,
  javascript: "javascript:alert(document.cookie)",
  data: "data:text/html,<script>alert(1)</script>",
  userinfo: `https://${CONSENT_HOST}@evil.example/connect`,
  long: `https://${CONSENT_HOST}/${"a".repeat(10_000)}`,
  control: `https://${CONSENT_HOST}/connect\r\nSet-Cookie: x=1`,
  plain_http: `http://${CONSENT_HOST}/connect`,
} as const;

export type ConsentPage = keyof typeof CONSENT_PAGES;
