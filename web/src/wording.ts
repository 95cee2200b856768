/**
 * The shared wording (src/wording/proposal.ts, also used by the CLI's review
 * prompt) and the viewer's time zone, for the page's components.
 */
export * from "../../src/wording/proposal";

/** The browser's time zone (UTC when it does not say). */
export const VIEWER_ZONE: string = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The text with its first letter in capitals ("This request expired …"). */
export const capitalized = (text: string): string => (text ? (text[0]?.toUpperCase() ?? "") + text.slice(1) : text);
