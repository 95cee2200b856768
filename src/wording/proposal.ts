/**
 * Proposals, outcomes and statuses in people's words, for the page (web/)
 * and the terminal (src/cli/review.ts) alike: "Add to calendar study: Study:
 * attention (40 min), Mon 14 Dec, 19:00–19:40 (Europe/Berlin)" rather than a
 * tool name and a JSON line. Pure: no Node or DOM API beyond `Intl`, so the
 * page's bundle imports it as it is (web/tsconfig.json type-checks it too).
 */

/** One row of a readable table of arguments. */
export interface Field {
  label: string;
  value: string;
}

/** What an action will do, as a sentence, and its arguments as a readable table. */
export interface ActionWords {
  summary: string;
  fields: Field[];
  /** The fields the summary does not already say (all of them for a tool whose shape is not known). */
  rest: Field[];
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const MAX_CELL_CHARS = 400;
const MAX_DEPTH = 3;

/** Whether `zone` is a time zone `Intl` knows (an unknown one falls back to UTC). */
function knownZone(zone: string | undefined): string | undefined {
  if (!zone) return undefined;
  try {
    new Intl.DateTimeFormat("en-GB", { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

/** "Mon 14 Dec" in `zone`. */
export function formatDay(instant: number, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: knownZone(zone) ?? "UTC",
    weekday: "short",
    day: "numeric",
    month: "short",
  })
    .format(instant)
    .replace(",", "");
}

/** "19:40" in `zone`. */
export function formatClock(instant: number, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: knownZone(zone) ?? "UTC",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(instant);
}

/** "Mon 14 Dec, 19:00" in `zone`; the text itself when it is not a date. */
export function formatMoment(value: string, zone: string): string {
  const instant = Date.parse(value);
  if (Number.isNaN(instant)) return value;
  return `${formatDay(instant, zone)}, ${formatClock(instant, zone)}`;
}

/** Milliseconds as a person says them: "40 min", "2 h 5 min", "12 s", "under a second". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1_000) return "under a second";
  const seconds = Math.round(ms / 1_000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** Counts with thousands separated: "12,400". */
export const formatCount = (value: number): string => new Intl.NumberFormat("en-GB").format(value);

/** `text` cut to `max` characters with an ellipsis; the full text belongs in a tooltip. */
export function shorten(text: string, max = 60): string {
  const single = text.replace(/\s+/g, " ").trim();
  return single.length <= max ? single : `${single.slice(0, max - 1).trimEnd()}…`;
}

/** A tool name as words: `search_notes` → "Search notes". */
export function toolWords(name: string): string {
  const words = name.replace(/[_-]+/g, " ").trim();
  return words ? words[0]?.toUpperCase() + words.slice(1) : name;
}

/** What a tool's risk means to a reviewer. */
export function riskWords(risk: string | undefined): string {
  switch (risk) {
    case "read":
      return "only reads";
    case "write_reversible":
      return "makes a change that can be undone";
    case "write_irreversible":
      return "makes a change that cannot be undone";
    default:
      return "unknown kind of change";
  }
}

/** Any argument value as readable text: dates in `zone`, lists joined, objects as "key: value" pairs. */
export function valueWords(value: unknown, zone: string, depth = 0): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") {
    const text = ISO_INSTANT.test(value) ? formatMoment(value, zone) : value;
    return text.length > MAX_CELL_CHARS ? `${text.slice(0, MAX_CELL_CHARS - 1)}…` : text;
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (depth >= MAX_DEPTH) return "…";
  if (Array.isArray(value))
    return value.length === 0 ? "none" : value.map((item) => valueWords(item, zone, depth + 1)).join(", ");
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return "nothing";
    return entries.map(([key, item]) => `${labelWords(key)}: ${valueWords(item, zone, depth + 1)}`).join("; ");
  }
  return String(value);
}

const LABELS: Record<string, string> = { timezone: "Time zone", start: "Starts", end: "Ends" };

/** An argument name as a label: `max_minutes` → "Max minutes". */
export const labelWords = (key: string): string =>
  Object.hasOwn(LABELS, key) ? (LABELS[key] as string) : toolWords(key);

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim().length > 0 ? value : undefined;

/** "Mon 14 Dec, 19:00–19:40 (Europe/Berlin)", the event's own zone named when it differs from the viewer's. */
export function spanWords(start: string, end: string, viewerZone: string, eventZone?: string): string {
  const from = Date.parse(start);
  const to = Date.parse(end);
  if (Number.isNaN(from) || Number.isNaN(to)) return `${start} – ${end}`;
  const zone = knownZone(viewerZone) ?? "UTC";
  const sameDay = formatDay(from, zone) === formatDay(to, zone);
  const until = sameDay ? formatClock(to, zone) : `${formatDay(to, zone)}, ${formatClock(to, zone)}`;
  const own = knownZone(eventZone);
  const zones = own && own !== zone ? `${zone}; the event's zone is ${own}` : zone;
  return `${formatDay(from, zone)}, ${formatClock(from, zone)}–${until} (${zones})`;
}

/** Arguments the host fills in (never the reviewer's to read). */
const HOST_FILLED = new Set(["user_id", "idempotency_key"]);

/** The readable table of any tool's arguments. */
export function fieldsOf(args: Record<string, unknown>, zone: string): Field[] {
  return Object.entries(args)
    .filter(([key]) => !HOST_FILLED.has(key))
    .map(([key, value]) => ({ label: labelWords(key), value: valueWords(value, zone) }));
}

/** What an action will do, in words; `viewerZone` is where the reader is (e.g. the browser's zone). */
export function describeAction(name: string, args: Record<string, unknown>, viewerZone: string): ActionWords {
  const fields = fieldsOf(args, viewerZone);
  if (name === "create_study_event") {
    const start = text(args.start);
    const end = text(args.end);
    const minutes = start && end ? Math.round((Date.parse(end) - Date.parse(start)) / 60_000) : Number.NaN;
    const length = Number.isFinite(minutes) && minutes > 0 ? ` (${formatDuration(minutes * 60_000)})` : "";
    const when = start && end ? `, ${spanWords(start, end, viewerZone, text(args.timezone))}` : "";
    const calendar = text(args.calendar) ?? "your calendar";
    const title = text(args.title) ?? "an event";
    // A title that already says how long ("Study: attention (40 min)") is not told it twice.
    const said = length !== "" && title.endsWith(length.trim());
    const told = new Set(["title", "start", "end", "timezone", "calendar"].map(labelWords));
    const rest = fields.filter((field) => !told.has(field.label));
    return { summary: `Add to calendar ${calendar}: ${title}${said ? "" : length}${when}`, fields, rest };
  }
  const query = text(args.query);
  return { summary: query ? `${toolWords(name)}: “${shorten(query, 80)}”` : toolWords(name), fields, rest: fields };
}

/** One changed argument of an edit. */
export interface Change {
  label: string;
  before: string;
  after: string;
}

/** What an edit changed, field by field, in words. */
export function diffArguments(before: Record<string, unknown>, after: Record<string, unknown>, zone: string): Change[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => !HOST_FILLED.has(key));
  const changes: Change[] = [];
  for (const key of keys) {
    const was = valueWords(before[key], zone);
    const now = valueWords(after[key], zone);
    if (was !== now) changes.push({ label: labelWords(key), before: was, after: now });
  }
  return changes;
}

/** A thread's or run's status as words (`interrupted` is a review waiting). */
export function statusWords(status: string | null | undefined): string {
  switch (status) {
    case "idle":
    case "completed":
      return "answered";
    case "busy":
    case "running":
    case "pending":
    case "planning":
    case "tool_proposed":
    case "executing":
      return "working";
    case "interrupted":
    case "waiting_approval":
      return "waiting for review";
    case "abstained":
      return "no answer found";
    case "needs_human":
      return "needs your answer";
    case "stopped":
      return "stopped";
    case "cancelled":
      return "cancelled";
    case "error":
    case "failed":
      return "failed";
    case "created":
      return "new";
    default:
      return "unknown";
  }
}

const BUDGETS: Record<string, string> = {
  model_turns: "model turns",
  tool_calls: "tool calls",
  deadline: "time",
  tokens: "tokens",
  cost: "cost",
};

/** Why a run ended, in plain words (the code itself belongs behind "details"). */
export function terminationWords(reason: { code: string; budget?: string }): string {
  switch (reason.code) {
    case "final_answer":
      return "Answered.";
    case "abstained":
      return "No answer: nothing you can access supports one.";
    case "needs_human":
      return "The assistant needs an answer from you.";
    case "budget_exhausted":
      return `Stopped: the ${BUDGETS[reason.budget ?? ""] ?? "run's"} budget ran out.`;
    case "repeated_action":
      return "Stopped: the assistant kept proposing the same action.";
    case "no_progress":
      return "Stopped: the assistant made no progress.";
    case "planner_error":
      return "Stopped: the planner failed.";
    case "unsupported_citation":
      return "Stopped: the answer cited something the run did not read.";
    case "tool_failure":
      return "Stopped: a tool failed.";
    case "approval_expired":
      return "Stopped: the review expired before it was decided.";
    default:
      return "Stopped.";
  }
}

/** What became of one reviewed action, as the server reports it (`POST /reviews/{thread_id}`). */
export type ActionOutcome =
  | "created"
  | "edited_and_created"
  | "rejected"
  | "failed"
  | "expired"
  | "not_run"
  | "pending";

/** The outcome as the reviewer reads it. */
export function outcomeWords(outcome: string, reason?: string | null): string {
  switch (outcome) {
    case "created":
      return "Done";
    case "edited_and_created":
      return "Edited, then done";
    case "rejected":
      return reason ? `Rejected: “${reason}”` : "Rejected";
    case "failed":
      return "Failed: the tool did not do it";
    case "expired":
      return "Expired: nothing was done";
    case "not_run":
      return "Not done";
    case "pending":
      return "Still waiting";
    default:
      return "Unknown";
  }
}

/** "this request expired at 18:47; alice must ask again" (the time in `zone`). */
export function expiredWords(expiresAt: string, owner: string, zone: string): string {
  const instant = Date.parse(expiresAt);
  const at = Number.isNaN(instant) ? "its deadline" : formatClock(instant, zone);
  return `this request expired at ${at}; ${owner || "its owner"} must ask again`;
}

const INSTANT_IN_TEXT = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d(?::\\d\\d(?:\\.\\d+)?)?(?:Z|[+-]\\d\\d:?\\d\\d)";

/**
 * A text (an answer) with its ISO instants said as a person would, in `zone`:
 * "2026-12-02T18:00:00+00:00 to 2026-12-02T18:40:00+00:00" → "Wed 2 Dec, 18:00–18:40".
 */
export function timesInWords(text: string, zone: string): string {
  const span = new RegExp(`(${INSTANT_IN_TEXT}) to (${INSTANT_IN_TEXT})`, "g");
  const spans = text.replace(span, (whole, start: string, end: string) => {
    const from = Date.parse(start);
    const to = Date.parse(end);
    if (Number.isNaN(from) || Number.isNaN(to)) return whole;
    const sameDay = formatDay(from, zone) === formatDay(to, zone);
    return `${formatMoment(start, zone)}–${sameDay ? formatClock(to, zone) : formatMoment(end, zone)}`;
  });
  return spans.replace(new RegExp(INSTANT_IN_TEXT, "g"), (instant) => formatMoment(instant, zone));
}
