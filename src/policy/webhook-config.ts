/**
 * `warrant.config.json` `webhooks`: where run webhooks may be sent, and how
 * deliveries are retried. A destination must start with one of `allow`
 * (same scheme, host and port; the path at a `/` boundary). Nothing is
 * allowed by default.
 */
import { z } from "zod";

const AllowedUrl = z
  .string()
  .min(1)
  .max(2048)
  .superRefine((text, context) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      context.addIssue({ code: "custom", message: "is not an absolute URL" });
      return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      context.addIssue({ code: "custom", message: "must be an http or https URL" });
    if (url.username || url.password) context.addIssue({ code: "custom", message: "must not carry credentials" });
    if (url.search || url.hash) context.addIssue({ code: "custom", message: "must not have a query or fragment" });
  });

export const WebhooksConfigSchema = z
  .object({
    /**
     * URL prefixes a run's `webhook` may name. A private, loopback or
     * link-local address is only reached when its entry names that address itself.
     */
    allow: z.array(AllowedUrl).max(64).default([]),
    /** Attempts per delivery before it is recorded `failed`. */
    max_attempts: z.number().int().min(1).max(20).default(5),
    /** Backoff between attempts: exponential from `base_ms`, capped at `max_ms`, with jitter. */
    retry: z
      .object({
        base_ms: z.number().int().min(10).max(600_000).default(1_000),
        max_ms: z.number().int().min(10).max(3_600_000).default(300_000),
      })
      .strict()
      .refine((retry) => retry.max_ms >= retry.base_ms, { message: "max_ms must be at least base_ms" })
      .default({ base_ms: 1_000, max_ms: 300_000 }),
    /** How long one attempt may take. */
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  })
  .strict()
  .default({ allow: [], max_attempts: 5, retry: { base_ms: 1_000, max_ms: 300_000 }, timeout_ms: 10_000 });
export type WebhooksConfig = z.infer<typeof WebhooksConfigSchema>;
