/**
 * The pieces of a Cedar request Warrant builds for each check: the user
 * entity (cached per principal object until the directory replaces it), the
 * resource a tool's resource rule names, the time in the principal's zone,
 * and the arguments converted to the types the schema declares.
 */
import type * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { Principal } from "../auth/principal.js";
import { NAMESPACE } from "./cedar-schema.js";
import type { CatalogTool } from "./contracts.js";

export type TypeNode = { type: string; element?: TypeNode; attributes?: Record<string, TypeNode>; name?: string };

/** The user entity and a key that names its content (for the decision cache). */
export interface UserEntity {
  entity: cedar.EntityJson;
  key: string;
}

const users = new WeakMap<Principal, { kinds: readonly string[]; user: UserEntity }>();

/**
 * The principal as a Cedar `User` in its `Role` and `Tenant`, with one grant set per kind the schema declares.
 * Principals come from the directory, which replaces its objects when it reloads: an object's entity is built once.
 */
export function userEntity(principal: Principal, grantKinds: readonly string[]): UserEntity {
  const cached = users.get(principal);
  if (cached && cached.kinds === grantKinds) return cached.user;
  const grants: Record<string, string[]> = {};
  for (const kind of grantKinds)
    grants[kind] = Object.hasOwn(principal.grants, kind) ? [...(principal.grants[kind] ?? [])] : [];
  const entity: cedar.EntityJson = {
    uid: { type: `${NAMESPACE}::User`, id: principal.user_id },
    attrs: { tenant: principal.tenant, role: principal.role, scopes: [...principal.scopes], grants },
    parents: [
      { type: `${NAMESPACE}::Role`, id: principal.role },
      { type: `${NAMESPACE}::Tenant`, id: principal.tenant },
    ],
  };
  const user = { entity, key: JSON.stringify([principal.user_id, entity.attrs]) };
  users.set(principal, { kinds: grantKinds, user });
  return user;
}

export interface ResourceOf {
  id: string;
  attrs: { named: boolean; matched: boolean; field: string; owner: string };
}

/** What the tool's resource rule names: the argument's value and the owner key its pattern extracts. */
export function resourceOf(tool: CatalogTool, args: Record<string, unknown>): ResourceOf {
  const rule = tool.contract.resource;
  if (!rule || !Object.hasOwn(args, rule.argument))
    return { id: "", attrs: { named: false, matched: false, field: rule?.principal_field ?? "", owner: "" } };
  const value = args[rule.argument];
  const owner = typeof value === "string" ? patternOf(rule.pattern).exec(value)?.[1] : undefined;
  return {
    id: typeof value === "string" ? value : JSON.stringify(value),
    attrs: { named: true, matched: owner !== undefined, field: rule.principal_field, owner: owner ?? "" },
  };
}

const patterns = new Map<string, RegExp>();
function patternOf(source: string): RegExp {
  let regex = patterns.get(source);
  if (!regex) {
    regex = new RegExp(source);
    patterns.set(source, regex);
  }
  return regex;
}

export interface CedarTime {
  epoch_s: number;
  hour: number;
  minute: number;
  weekday: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    const options = { hourCycle: "h23", hour: "numeric", minute: "numeric", weekday: "short" } as const;
    try {
      format = new Intl.DateTimeFormat("en-US", { ...options, timeZone: zone });
    } catch {
      format = new Intl.DateTimeFormat("en-US", { ...options, timeZone: "UTC" });
    }
    formats.set(zone, format);
  }
  return format;
}

/** Hour, minute and weekday (0 = Sunday) in the zone; UTC without one or for a zone the runtime does not know. */
export function timeOf(now: number, zone: string | undefined): CedarTime {
  let hour = 0;
  let minute = 0;
  let weekday = -1;
  for (const part of formatOf(zone ?? "UTC").formatToParts(now)) {
    if (part.type === "hour") hour = Number(part.value);
    else if (part.type === "minute") minute = Number(part.value);
    else if (part.type === "weekday") weekday = WEEKDAYS.indexOf(part.value);
  }
  return { epoch_s: Math.floor(now / 1000), hour, minute, weekday };
}

/** An argument value as the schema declares it; throws when it does not fit (fail closed). */
function convert(value: unknown, type: TypeNode, where: string): unknown {
  switch (type.type) {
    case "String":
      if (typeof value === "string") return value;
      break;
    case "Long":
      if (typeof value === "number" && Number.isSafeInteger(value)) return value;
      break;
    case "Bool":
    case "Boolean":
      if (typeof value === "boolean") return value;
      break;
    case "Set":
      if (Array.isArray(value) && type.element)
        return value.map((item, i) => convert(item, type.element as TypeNode, `${where}[${i}]`));
      break;
    case "Record":
      if (typeof value === "object" && value !== null && !Array.isArray(value))
        return convertRecord(value as Record<string, unknown>, type.attributes ?? {}, where);
      break;
  }
  throw new Error(`argument ${where} is not a ${type.type} as the Cedar schema declares`);
}

/** The arguments the schema declares, converted; undeclared ones are left out, a misfit throws. */
export function convertRecord(
  value: Record<string, unknown>,
  attributes: Record<string, TypeNode>,
  where = "args",
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(attributes)) {
    if (!Object.hasOwn(value, name) || value[name] === null || value[name] === undefined) continue;
    out[name] = convert(value[name], type, `${where}.${name}`);
  }
  return out;
}
