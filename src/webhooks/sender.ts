/**
 * One webhook attempt: a POST to the address that was checked (the
 * connection's DNS lookup answers with it, so a changed record cannot
 * redirect it), signed, with a timeout. Redirects are not followed: a 3xx
 * is the answer.
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Destination } from "./destination.js";
import { SIGNATURE_HEADER, signatureHeader } from "./signature.js";

export type Attempt = { status: number; error: null } | { status: null; error: string };

export function postWebhook(
  destination: Destination,
  request: { body: string; secret: string; deliveryId: string; event: string; timeoutMs: number },
): Promise<Attempt> {
  const { url, address, family } = destination;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const timestamp = Math.floor(Date.now() / 1000);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    const outgoing = client.request(
      url,
      {
        method: "POST",
        lookup: pinned,
        timeout: request.timeoutMs,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(request.body),
          "User-Agent": "warrant-webhooks",
          [SIGNATURE_HEADER]: signatureHeader(request.secret, timestamp, request.body),
          "Warrant-Webhook-Id": request.deliveryId,
          "Warrant-Webhook-Event": request.event,
        },
      },
      (response) => {
        // The answer's body is not read beyond what arrives; only the status counts.
        response.resume();
        resolve({ status: response.statusCode ?? 0, error: null });
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.on("error", (error) => resolve({ status: null, error: error.message.slice(0, 300) }));
    outgoing.end(request.body);
  });
}
