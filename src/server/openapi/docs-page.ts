/**
 * `/docs`: the API reference as one HTML page rendered on the server from the
 * OpenAPI document. It loads nothing (no script, font or stylesheet from
 * anywhere), so it renders offline; its CSP allows only its own inline style.
 */
import type { Hono } from "hono";
import type { Env } from "../context.js";
import { openApiDocument } from "./document.js";

type Json = Record<string, unknown>;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const pretty = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:960px;padding:1rem 2rem;color:#1b1f24}
h2{border-bottom:1px solid #ccd;margin-top:2rem}section.op{border:1px solid #dde;border-radius:6px;margin:.8rem 0;padding:.5rem .9rem}
.method{display:inline-block;min-width:4.5rem;font-weight:700;text-transform:uppercase;font-family:monospace}
code.path{font-size:1rem}pre{background:#f5f6f8;padding:.6rem;overflow:auto;font-size:12px}
table{border-collapse:collapse}td,th{padding:.15rem .6rem;text-align:left;vertical-align:top}nav a{margin-right:.8rem}`;

function operationHtml(path: string, method: string, op: Json): string {
  const parameters = (op["parameters"] as Json[] | undefined) ?? [];
  const body = (op["requestBody"] as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  const responses = Object.entries((op["responses"] as Record<string, Json>) ?? {});
  const security = (op["security"] as Json[] | undefined) ?? [];
  const rows = parameters
    .map(
      (p) =>
        `<tr><td><code>${escapeHtml(String(p["name"]))}</code></td><td>${escapeHtml(String(p["in"]))}</td>` +
        `<td>${p["required"] ? "required" : ""}</td></tr>`,
    )
    .join("");
  const answers = responses
    .map(([status, answer]) => {
      const media = Object.entries((answer["content"] as Record<string, { schema?: unknown }>) ?? {});
      const schemas = media.map(
        ([type, item]) => `<details><summary>${escapeHtml(type)}</summary>${pretty(item.schema ?? {})}</details>`,
      );
      return `<tr><td><b>${escapeHtml(status)}</b></td><td>${escapeHtml(String(answer["description"] ?? ""))}${schemas.join("")}</td></tr>`;
    })
    .join("");
  return `<section class="op" id="${escapeHtml(String(op["operationId"]))}">
<div><span class="method">${escapeHtml(method)}</span> <code class="path">${escapeHtml(path)}</code></div>
<p>${escapeHtml(String(op["summary"] ?? ""))}${security.length === 0 ? " <i>(no token)</i>" : ""}</p>
${rows ? `<table><tr><th>parameter</th><th>in</th><th></th></tr>${rows}</table>` : ""}
${body ? `<details><summary>request body</summary>${pretty(body["application/json"]?.schema ?? {})}</details>` : ""}
<table>${answers}</table></section>`;
}

/** The page for a document. */
export function docsPage(document: Json): string {
  const info = document["info"] as Json;
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document["paths"] as Record<string, Record<string, Json>>))
    for (const [method, op] of Object.entries(item)) {
      const tag = String((op["tags"] as string[] | undefined)?.[0] ?? "other");
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationHtml(path, method, op)]);
    }
  const sections = [...byTag].map(
    ([tag, ops]) => `<h2 id="tag-${escapeHtml(tag)}">${escapeHtml(tag)}</h2>${ops.join("\n")}`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(String(info["title"]))} reference</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head><body>
<h1>${escapeHtml(String(info["title"]))} <small>${escapeHtml(String(info["version"]))}</small></h1>
<p>${escapeHtml(String(info["description"] ?? ""))} The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>
<p>Every error body:</p>${pretty((document["components"] as Json)["schemas"])}
<nav>${[...byTag.keys()].map((tag) => `<a href="#tag-${escapeHtml(tag)}">${escapeHtml(tag)}</a>`).join("")}</nav>
${sections.join("\n")}</body></html>`;
}

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** `GET /openapi.json` and `GET /docs`: public (no token), nothing about users or configuration. */
export function registerOpenApiRoutes(app: Hono<Env>, version: string): void {
  let page: string | undefined;
  app.get("/openapi.json", (c) => c.json(openApiDocument(version)));
  app.get("/docs", (c) => {
    page ??= docsPage(openApiDocument(version));
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    return c.html(page);
  });
}
