/**
 * Checks one HTTP exchange against the OpenAPI document: the path matched to
 * a template (literal segments before parameters), the request body against
 * the operation's request schema, the response against its status's schema.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Json = Record<string, unknown>;
export interface Exchange {
  method: string;
  path: string;
  status: number;
  type?: string;
  request: unknown;
  response: unknown;
}

interface Template {
  path: string;
  pattern: RegExp;
  params: number;
}

export function exchangeChecker(document: Json): (exchange: Exchange) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  ajv.addSchema(document["components"] as Json, "components");
  const paths = document["paths"] as Record<string, Record<string, Json>>;
  const templates: Template[] = Object.keys(paths).map((path) => ({
    path,
    pattern: new RegExp(`^${path.replace(/[.]/g, "\\.").replace(/\{\w+\}/g, "[^/]+")}$`),
    params: (path.match(/\{/g) ?? []).length,
  }));
  const compiled = new Map<object, ReturnType<Ajv2020["compile"]>>();
  const check = (schema: Json, value: unknown, what: string): string[] => {
    const text = JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/schemas/');
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(JSON.parse(text) as Json);
      compiled.set(schema, validate);
    }
    return validate(value) ? [] : [`${what}: ${ajv.errorsText(validate.errors)}`];
  };

  return (exchange) => {
    const where = `${exchange.method.toUpperCase()} ${exchange.path} ${exchange.status}`;
    const template = templates
      .filter((candidate) => candidate.pattern.test(exchange.path) && paths[candidate.path]?.[exchange.method])
      .sort((a, b) => a.params - b.params)[0];
    if (!template) return [`${where}: no operation in the document`];
    const operation = paths[template.path]?.[exchange.method] as Json;
    const errors: string[] = [];
    const requestSchema = (operation["requestBody"] as { content?: Record<string, { schema: Json }> } | undefined)
      ?.content?.["application/json"]?.schema;
    // A request the server accepted must fit the request schema; a refused one may not (that is why it was refused).
    if (requestSchema && exchange.status < 400 && exchange.request !== null)
      errors.push(...check(requestSchema, exchange.request, `${where} request`));
    const responses = operation["responses"] as Record<string, Json>;
    const answer = responses[String(exchange.status)];
    if (!answer) return [...errors, `${where}: status not in the document (${Object.keys(responses).join(", ")})`];
    const content = answer["content"] as Record<string, { schema?: Json }> | undefined;
    if (!content) return exchange.response === null ? errors : [...errors, `${where}: the document says no body`];
    if (content["*/*"]) return errors;
    const media = content[exchange.type ?? ""] ?? (exchange.type === "" ? undefined : undefined);
    if (!media)
      return [...errors, `${where}: ${exchange.type || "no content type"} not in ${Object.keys(content).join(", ")}`];
    if (exchange.type === "application/json" && media.schema)
      errors.push(...check(media.schema, exchange.response, `${where} response`));
    return errors;
  };
}
