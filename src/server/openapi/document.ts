/**
 * The OpenAPI 3.1 document of the API, generated from the route registry and
 * the zod schemas the server validates with (zod 4's `z.toJSONSchema`, JSON
 * Schema 2020-12, which is OpenAPI 3.1's dialect). Every error answer is the
 * typed error body of api-error.ts.
 */
import { z } from "zod";
import { LANGGRAPH_ROUTES } from "./langgraph-routes.js";
import type { Answer, RouteSpec } from "./registry.js";
import { ErrorBody } from "./responses.js";
import { WARRANT_ROUTES } from "./warrant-routes.js";

type Json = Record<string, unknown>;

/** Every route the API serves, as the document lists them. */
export const API_ROUTES: readonly RouteSpec[] = [...WARRANT_ROUTES, ...LANGGRAPH_ROUTES];

/** A zod schema as JSON Schema 2020-12: what a client sends (`input`) or receives (`output`). */
export function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    target: "draft-2020-12",
  });
  // zod closes every object it outputs (`additionalProperties: false`); the server's answers may carry more
  // fields than a response schema names (LangGraph adds some between versions), so answers are described open.
  return io === "output" ? (opened(rest) as Json) : rest;
}

/** `schema` with every `additionalProperties: false` removed, recursively. */
function opened(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(opened);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === "additionalProperties" && value === false))
      .map(([key, value]) => [key, opened(value)]),
  );
}

const ERROR_REF = { $ref: "#/components/schemas/Error" };
const ERROR_TEXT: Record<number, string> = {
  400: "invalid_json, or a refused command",
  401: "no valid token (token_* or principal_*)",
  403: "not permitted",
  404: "not_found: no such object, or not the caller's",
  409: "a conflict with the object's state",
  413: "body_too_large",
  422: "invalid_request (naming the field) or unsupported",
  429: "too many runs or crons at once (Retry-After)",
  500: "internal_error",
  503: "shutting down, or the database or identity provider is unavailable (Retry-After)",
};

const pathParams = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? "");

/** The error statuses of a route: those of its kind (auth, body, path ids) and its own. */
export function errorStatuses(route: RouteSpec): number[] {
  const statuses = new Set<number>([500, ...(route.errors ?? [])]);
  if (route.auth !== "none") statuses.add(401);
  if (route.auth === "bearer") statuses.add(503);
  if (route.body || route.query) for (const status of [400, 413, 422]) statuses.add(status);
  if (pathParams(route.path).length > 0) statuses.add(404);
  for (const status of [...Object.keys(route.ok), ...Object.keys(route.other ?? {})]) statuses.delete(Number(status));
  return [...statuses].sort();
}

function content(answer: Answer): Json | undefined {
  switch (answer.type ?? "application/json") {
    case "none":
      return undefined;
    case "any":
      return { "*/*": {} };
    case "application/json":
      return { "application/json": { schema: answer.schema ? jsonSchema(answer.schema, "output") : {} } };
    case "text/event-stream":
      return { "text/event-stream": { schema: { type: "string", description: "server-sent events" } } };
    default:
      return { [answer.type ?? ""]: { schema: { type: "string" } } };
  }
}

function response(answer: Answer): Json {
  const body = content(answer);
  return { description: answer.description || "OK", ...(body ? { content: body } : {}) };
}

function operation(route: RouteSpec): Json {
  const parameters: Json[] = pathParams(route.path).map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  if (route.query) {
    const query = jsonSchema(route.query, "input") as { properties?: Json; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {}))
      parameters.push({ name, in: "query", required: (query.required ?? []).includes(name), schema });
  }
  const responses: Json = {};
  for (const [status, answer] of Object.entries({ ...route.ok, ...route.other })) responses[status] = response(answer);
  for (const status of errorStatuses(route))
    responses[String(status)] = {
      description: ERROR_TEXT[status] ?? "an error",
      content: { "application/json": { schema: ERROR_REF } },
    };
  return {
    tags: [route.tag],
    summary: route.summary,
    operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? "").toUpperCase())}`,
    security:
      route.auth === "none" ? [] : route.auth === "operator" ? [{ operator: [] }] : [{ bearer: [] }, { apiKey: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: { required: true, content: { "application/json": { schema: jsonSchema(route.body, "input") } } },
        }
      : {}),
    responses,
  };
}

let built: Json | undefined;

/** The document (built once: the routes and schemas are fixed at start). */
export function openApiDocument(version: string): Json {
  if (built && (built["info"] as Json)["version"] === version) return built;
  const paths: Record<string, Json> = {};
  for (const route of API_ROUTES) paths[route.path] = { ...paths[route.path], [route.method]: operation(route) };
  built = {
    openapi: "3.1.0",
    info: {
      title: "Warrant API",
      version,
      description:
        "LangGraph's Agent Server API as Warrant serves it, with Warrant's reviews, elicitations, OAuth callback and " +
        "operator routes. Every error is `{ error, message }` with a typed code.",
    },
    tags: [...new Set(API_ROUTES.map((route) => route.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: jsonSchema(ErrorBody, "output") },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A Warrant API token or an identity provider's token" },
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "X-Api-Key",
          description: "The same token, as the SDK's apiKey sends it",
        },
        operator: { type: "http", scheme: "bearer", description: "An operator token minted by the CLI" },
      },
    },
  };
  return built;
}
