/**
 * The routes the API serves, one entry each: method, path template, who may
 * call it, the zod schemas the server validates the request with, and what it
 * answers. The OpenAPI document (document.ts) is generated from this list and
 * the recorded-traffic test holds the server to it.
 */
import type { z } from "zod";

export type Method = "get" | "post" | "put" | "patch" | "delete";
/** `bearer`: a user's API token (or X-Api-Key); `operator`: an operator token; `none`: public. */
export type Auth = "bearer" | "operator" | "none";
export type MediaType =
  | "application/json"
  | "text/event-stream"
  | "text/html"
  | "text/javascript"
  | "text/plain"
  | "none"
  | "any";

export interface Answer {
  description: string;
  type?: MediaType;
  /** The body's schema (JSON answers); absent: any JSON. */
  schema?: z.ZodType;
}

export interface RouteSpec {
  method: Method;
  /** OpenAPI path template: `/threads/{thread_id}`. */
  path: string;
  tag: string;
  summary: string;
  auth: Auth;
  /** The request body, as the server parses it (absent: the route reads none). */
  body?: z.ZodType;
  /** The query parameters, as an object schema. */
  query?: z.ZodObject;
  /** The success answers by status (errors are added by the generator: the typed error body). */
  ok: Record<number, Answer>;
  /** Error statuses besides the ones every route of its kind has; a status given in `ok` is not repeated. */
  errors?: number[];
  /** Non-JSON or non-standard answers for an error status (JSON-RPC routes). */
  other?: Record<number, Answer>;
}

export const json = (description: string, schema?: z.ZodType): Answer =>
  schema ? { description, type: "application/json", schema } : { description, type: "application/json" };
export const sse = (description: string): Answer => ({ description, type: "text/event-stream" });
export const empty = (description: string): Answer => ({ description, type: "none" });
export const html = (description: string): Answer => ({ description, type: "text/html" });
