/**
 * Logic behind the `calendar` MCP server: tool schemas, date-time and time-zone
 * validation, and an event store kept in one JSON file.
 *
 * The store operations (`listEvents`, `getWriteStatus`, `planCreate`) are pure
 * functions over an in-memory {@link CalendarStore}; the clock and the id
 * generator are passed in. File access lives only in {@link loadStore},
 * {@link saveStore} and {@link CalendarFile}, which do nothing until called.
 *
 * Idempotency rule for `create_study_event` (per user, per idempotency key):
 * - first use of a key: the event is created, `replayed: false`;
 * - same key, same arguments: the original event is returned, `replayed: true`,
 *   and nothing is written;
 * - same key, different arguments: error `invalid_arguments`
 *   ("idempotency key reused with different arguments"), nothing is written.
 * "Same arguments" means an identical title, calendar and timezone, and start
 * and end denoting the same instants (`...T10:00:00Z` equals `...T12:00:00+02:00`).
 * A key therefore never yields a second event, whatever the retry sends.
 */
import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";

// ---------------------------------------------------------------------------
// Identifiers, formats and limits
// ---------------------------------------------------------------------------

/** Host-injected caller ids are short lowercase handles. */
export const USER_ID_PATTERN = /^[a-z0-9_-]+$/;

/** Idempotency keys: 8–128 characters of a URL- and log-safe alphabet. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]+$/;

/** Calendar names such as `study` or `cs301-exams`. */
export const CALENDAR_PATTERN = /^[a-z0-9_-]+$/;

/**
 * An ISO 8601 date-time with a mandatory offset: `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`.
 * Field ranges and the calendar day are checked separately by {@link parseInstant}.
 */
export const ISO_DATE_TIME_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** The shape of an IANA zone name (`UTC`, `Europe/Berlin`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`). */
export const TIME_ZONE_PATTERN = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9][A-Za-z0-9_+-]*)*$/;

/** Longest event a study block may be. */
export const MAX_EVENT_DURATION_MS = 24 * 60 * 60 * 1000;

/** The business error codes this server emits (a subset of what the host understands). */
export type CalendarErrorCode = "invalid_arguments" | "transient_error" | "outcome_unknown" | "tool_failed";

/** A business error as sent to the host: the text content of an `isError` result. */
export interface CalendarError {
  readonly code: CalendarErrorCode;
  readonly message: string;
}

/** Longest event description (its contents: topic, cited notes). */
export const MAX_DESCRIPTION_CHARS = 2_000;

/** True when text can be stored as Postgres text: no NUL or other control characters (tab and newline aside), no lone surrogates. */
export function isStorableText(text: string): boolean {
  return (
    // biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find control characters.
    !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) &&
    !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)
  );
}

/** The exact message for a reused idempotency key. */
export const KEY_REUSED_MESSAGE = "idempotency key reused with different arguments";

// ---------------------------------------------------------------------------
// Date-time and time-zone validation
// ---------------------------------------------------------------------------

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Epoch milliseconds of an ISO 8601 date-time with offset, or `undefined` when
 * the text does not match {@link ISO_DATE_TIME_PATTERN}, a field is out of
 * range, the day does not exist (`2025-02-30`), or `Date.parse` rejects it.
 * The explicit checks matter: `Date.parse` silently rolls `02-30` into March.
 */
export function parseInstant(text: string): number | undefined {
  const match = ISO_DATE_TIME_PATTERN.exec(text);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second, , offsetHour, offsetMinute] = match;
  const y = Number(year);
  const mo = Number(month);
  if (mo < 1 || mo > 12) return undefined;
  if (Number(day) < 1 || Number(day) > daysInMonth(y, mo)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? "0") > 59) return undefined;
  if (offsetHour !== undefined && (Number(offsetHour) > 23 || Number(offsetMinute) > 59)) return undefined;
  const instant = Date.parse(text);
  return Number.isFinite(instant) ? instant : undefined;
}

/** True when `text` is a valid ISO 8601 date-time with offset. */
export function isIsoDateTime(text: string): boolean {
  return parseInstant(text) !== undefined;
}

/** True when `name` looks like an IANA zone name and `Intl.DateTimeFormat` accepts it. */
export function isKnownTimeZone(name: string): boolean {
  if (!TIME_ZONE_PATTERN.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// Schemas (shared by the server and the tests)
// ---------------------------------------------------------------------------

const userIdField = z
  .string()
  .min(1)
  .max(64)
  .regex(USER_ID_PATTERN)
  .describe("Caller identity, injected by the host from the authenticated principal; not chosen by the model.");

const idempotencyKeyField = z
  .string()
  .min(8)
  .max(128)
  .regex(IDEMPOTENCY_KEY_PATTERN)
  .describe("Client-chosen key (8–128 of A-Z a-z 0-9 _ . : -). Reusing it never creates a second event.");

const calendarField = z.string().min(1).max(64).regex(CALENDAR_PATTERN);

const dateTimeField = z
  .string()
  .max(40)
  .regex(ISO_DATE_TIME_PATTERN, "expected an ISO 8601 date-time with offset, e.g. 2025-03-01T18:00:00+01:00")
  .refine(isIsoDateTime, "not a valid date-time");

const timeZoneField = z
  .string()
  .min(1)
  .max(64)
  .refine(isKnownTimeZone, "unknown IANA time zone")
  .describe("IANA time zone of the event, e.g. Europe/Berlin.");

/** One stored event, as returned by every tool. */
export const EventSchema = z
  .object({
    event_id: z.string().min(1),
    user_id: z.string(),
    title: z.string(),
    description: z.string().optional(),
    start: z.string(),
    end: z.string(),
    timezone: z.string(),
    calendar: z.string(),
    idempotency_key: z.string(),
    created_at: z.string(),
  })
  .strict();

/** Input of `list_events`; strict, so unknown keys are rejected. */
export const ListEventsInputSchema = z
  .object({
    user_id: userIdField,
    calendar: calendarField.optional().describe("Only events of this calendar."),
    from: dateTimeField.optional().describe("Window start (ISO 8601 with offset): only events ending after it."),
    to: dateTimeField.optional().describe("Window end (ISO 8601 with offset): only events starting before it."),
  })
  .strict();

/** Input of `create_study_event`; strict, so unknown keys are rejected. */
export const CreateStudyEventInputSchema = z
  .object({
    user_id: userIdField,
    idempotency_key: idempotencyKeyField,
    title: z
      .string()
      .min(1)
      .max(200)
      .regex(/\S/, "title must not be blank")
      .refine((text) => isStorableText(text) && !/[\n\t]/.test(text), "title must not contain control characters")
      .describe("Event title, 1–200 characters."),
    description: z
      .string()
      .max(MAX_DESCRIPTION_CHARS)
      .refine(isStorableText, "description must not contain control characters other than newline and tab")
      .optional()
      .describe(`Event contents, e.g. the topic and the notes it cites; at most ${MAX_DESCRIPTION_CHARS} characters.`),
    start: dateTimeField.describe("Start, ISO 8601 with offset, e.g. 2025-03-01T18:00:00+01:00."),
    end: dateTimeField.describe("End, ISO 8601 with offset; after start and at most 24 h later."),
    timezone: timeZoneField,
    calendar: calendarField.describe("Target calendar, e.g. study."),
  })
  .strict();

/** Input of `get_write_status`; strict, so unknown keys are rejected. */
export const GetWriteStatusInputSchema = z
  .object({
    user_id: userIdField,
    idempotency_key: idempotencyKeyField,
  })
  .strict();

/** Structured result of `list_events`. */
export const ListEventsOutputSchema = z.object({ events: z.array(EventSchema) });

/** Structured result of `create_study_event`. */
export const CreateStudyEventOutputSchema = z.object({ event: EventSchema, replayed: z.boolean() });

/** Structured result of `get_write_status`; `event` is present exactly when `applied` is true. */
export const GetWriteStatusOutputSchema = z.object({ applied: z.boolean(), event: EventSchema.optional() });

/** The store file. */
export const CalendarStoreSchema = z
  .object({
    version: z.literal(1),
    events: z.array(EventSchema),
  })
  .strict();

export type CalendarEvent = z.infer<typeof EventSchema>;
export type CalendarStore = z.infer<typeof CalendarStoreSchema>;
export type ListEventsInput = z.infer<typeof ListEventsInputSchema>;
export type CreateStudyEventInput = z.infer<typeof CreateStudyEventInputSchema>;
export type GetWriteStatusInput = z.infer<typeof GetWriteStatusInputSchema>;
export type ListEventsResult = z.infer<typeof ListEventsOutputSchema>;
export type CreateStudyEventResult = z.infer<typeof CreateStudyEventOutputSchema>;
export type WriteStatus = z.infer<typeof GetWriteStatusOutputSchema>;

// ---------------------------------------------------------------------------
// Pure store operations
// ---------------------------------------------------------------------------

/** A store with no events. */
export function emptyStore(): CalendarStore {
  return { version: 1, events: [] };
}

function invalid(message: string): CalendarError {
  return { code: "invalid_arguments", message };
}

/** Instant of a date-time that has already passed validation. */
function instantOf(text: string): number {
  const instant = parseInstant(text);
  if (instant === undefined) throw new Error(`invalid date-time in store or arguments: ${text}`);
  return instant;
}

function compareEvents(left: CalendarEvent, right: CalendarEvent): number {
  const byStart = instantOf(left.start) - instantOf(right.start);
  if (byStart !== 0) return byStart;
  const byEnd = instantOf(left.end) - instantOf(right.end);
  if (byEnd !== 0) return byEnd;
  return left.event_id < right.event_id ? -1 : left.event_id > right.event_id ? 1 : 0;
}

/** A validated list window: epoch milliseconds, either end open. */
export interface ListWindow {
  readonly from: number | undefined;
  readonly to: number | undefined;
}

/** Checks a list request's window bounds (both stores use it). */
export function listWindow(
  input: Pick<ListEventsInput, "from" | "to">,
): { readonly ok: true; readonly window: ListWindow } | { readonly ok: false; readonly error: CalendarError } {
  const from = input.from === undefined ? undefined : parseInstant(input.from);
  const to = input.to === undefined ? undefined : parseInstant(input.to);
  if (input.from !== undefined && from === undefined)
    return { ok: false, error: invalid("from is not a valid ISO 8601 date-time with offset") };
  if (input.to !== undefined && to === undefined)
    return { ok: false, error: invalid("to is not a valid ISO 8601 date-time with offset") };
  if (from !== undefined && to !== undefined && from > to)
    return { ok: false, error: invalid("from must not be after to") };
  return { ok: true, window: { from, to } };
}

/**
 * The caller's events, optionally narrowed to one calendar and to those
 * overlapping the window [from, to) — an event counts if it ends after `from`
 * and starts before `to` — sorted by start, then end, then id.
 */
export function listEvents(
  store: CalendarStore,
  input: ListEventsInput,
): { readonly ok: true; readonly result: ListEventsResult } | { readonly ok: false; readonly error: CalendarError } {
  const checked = listWindow(input);
  if (!checked.ok) return checked;
  const { from, to } = checked.window;
  const events = store.events
    .filter((event) => event.user_id === input.user_id)
    .filter((event) => input.calendar === undefined || event.calendar === input.calendar)
    .filter((event) => from === undefined || instantOf(event.end) > from)
    .filter((event) => to === undefined || instantOf(event.start) < to)
    .sort(compareEvents);
  return { ok: true, result: { events } };
}

/** The event a user created with an idempotency key, if any. Keys are scoped per user. */
export function findByKey(store: CalendarStore, userId: string, idempotencyKey: string): CalendarEvent | undefined {
  return store.events.find((event) => event.user_id === userId && event.idempotency_key === idempotencyKey);
}

/** Whether a write with this key was applied for this user, and its event if so. */
export function getWriteStatus(store: CalendarStore, input: GetWriteStatusInput): WriteStatus {
  const event = findByKey(store, input.user_id, input.idempotency_key);
  return event === undefined ? { applied: false } : { applied: true, event };
}

/** Cross-field checks the schema cannot express: end after start, at most 24 h. */
export function checkEventWindow(start: string, end: string): CalendarError | undefined {
  const startInstant = parseInstant(start);
  const endInstant = parseInstant(end);
  if (startInstant === undefined) return invalid("start is not a valid ISO 8601 date-time with offset");
  if (endInstant === undefined) return invalid("end is not a valid ISO 8601 date-time with offset");
  if (endInstant <= startInstant) return invalid("end must be after start");
  if (endInstant - startInstant > MAX_EVENT_DURATION_MS) return invalid("event must not be longer than 24 hours");
  return undefined;
}

/** True when a retry carries the same arguments as the event it would replay. */
export function sameArguments(event: CalendarEvent, input: CreateStudyEventInput): boolean {
  return (
    event.title === input.title &&
    (event.description ?? "") === (input.description ?? "") &&
    event.calendar === input.calendar &&
    event.timezone === input.timezone &&
    instantOf(event.start) === instantOf(input.start) &&
    instantOf(event.end) === instantOf(input.end)
  );
}

/** Clock and id source for {@link planCreate}; injected so the function stays pure. */
export interface CreateContext {
  readonly now: () => Date;
  readonly newEventId: () => string;
}

/** The production context: wall clock and random ids. */
export const SYSTEM_CONTEXT: CreateContext = {
  now: () => new Date(),
  newEventId: () => `evt_${randomUUID()}`,
};

/** What `create_study_event` decides; only `created` carries a store to persist. */
export type CreatePlan =
  | { readonly kind: "created"; readonly store: CalendarStore; readonly result: CreateStudyEventResult }
  | { readonly kind: "replayed"; readonly result: CreateStudyEventResult }
  | { readonly kind: "rejected"; readonly error: CalendarError };

/**
 * Decides a `create_study_event` call against the current store without
 * mutating it. Arguments are assumed to have passed
 * {@link CreateStudyEventInputSchema}; the window is checked here. See the
 * module comment for the idempotency rule.
 */
export function planCreate(
  store: CalendarStore,
  input: CreateStudyEventInput,
  context: CreateContext = SYSTEM_CONTEXT,
): CreatePlan {
  const windowError = checkEventWindow(input.start, input.end);
  if (windowError !== undefined) return { kind: "rejected", error: windowError };

  const existing = findByKey(store, input.user_id, input.idempotency_key);
  if (existing !== undefined) return decideExisting(existing, input);

  const event = newEvent(input, context);
  return { kind: "created", store: { ...store, events: [...store.events, event] }, result: { event, replayed: false } };
}

/** What a create with an already used key gets: the original event (same arguments) or `invalid_arguments`. */
export function decideExisting(
  existing: CalendarEvent,
  input: CreateStudyEventInput,
): Exclude<CreatePlan, { kind: "created" }> {
  return sameArguments(existing, input)
    ? { kind: "replayed", result: { event: existing, replayed: true } }
    : { kind: "rejected", error: invalid(KEY_REUSED_MESSAGE) };
}

/** The event a first use of a key creates. An empty description is stored as none. */
export function newEvent(input: CreateStudyEventInput, context: CreateContext = SYSTEM_CONTEXT): CalendarEvent {
  return {
    event_id: context.newEventId(),
    user_id: input.user_id,
    title: input.title,
    ...(input.description ? { description: input.description } : {}),
    start: input.start,
    end: input.end,
    timezone: input.timezone,
    calendar: input.calendar,
    idempotency_key: input.idempotency_key,
    created_at: context.now().toISOString(),
  };
}

// ---------------------------------------------------------------------------
// The store file
// ---------------------------------------------------------------------------

/**
 * Validates raw JSON as a store.
 * @throws Error with a readable list of problems when the data is invalid.
 */
export function parseStore(raw: unknown): CalendarStore {
  const result = CalendarStoreSchema.safeParse(raw);
  if (!result.success) throw new Error(`invalid calendar store:\n${z.prettifyError(result.error)}`);
  for (const event of result.data.events) {
    if (!isIsoDateTime(event.start) || !isIsoDateTime(event.end)) {
      throw new Error(`invalid calendar store: event ${event.event_id} has an invalid start or end`);
    }
  }
  return result.data;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}

/** Reads and validates the store; a missing file is an empty store (the file is created on first write). */
export async function loadStore(filePath: string): Promise<CalendarStore> {
  let text: string;
  try {
    text = await readFile(filePath, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return emptyStore();
    throw error;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${filePath} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseStore(raw);
}

/**
 * Writes the store atomically: a temp file in the same directory, flushed to
 * disk, then renamed over the target. Readers see the old file or the new one,
 * never a partial write. When this resolves, the new content is on disk.
 */
export async function saveStore(filePath: string, store: CalendarStore): Promise<void> {
  const directory = path.dirname(filePath);
  await mkdir(directory, { recursive: true });
  const tempPath = path.join(directory, `.${path.basename(filePath)}.${process.pid}.${randomUUID()}.tmp`);
  try {
    const handle = await open(tempPath, "wx", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(store, null, 2)}\n`, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tempPath, filePath);
  } catch (error) {
    await rm(tempPath, { force: true });
    throw error;
  }
  await syncDirectory(directory);
}

/** Best effort: makes the rename itself durable. Some platforms cannot open directories; that is not an error. */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The rename is already visible; only its durability across a power cut is at stake.
  }
}

/** A lock file older than this is treated as abandoned (a write holds it for milliseconds). */
const STALE_LOCK_MS = 30_000;

/** How long a writer waits for another process's lock before giving up. */
const LOCK_WAIT_MS = 5_000;

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

/** A lock is stale when its owner is gone (or is this process, which serializes in memory) or it is very old. */
async function lockIsStale(lockPath: string): Promise<boolean> {
  try {
    const [content, info] = await Promise.all([readFile(lockPath, "utf8"), stat(lockPath)]);
    if (Date.now() - info.mtimeMs > STALE_LOCK_MS) return true;
    const pid = Number(content.trim());
    if (!Number.isSafeInteger(pid) || pid <= 0) return false; // Being written right now.
    return pid === process.pid || !processIsAlive(pid);
  } catch {
    // Gone (released meanwhile: retry at once) or unreadable (leave it; the wait times out).
    return false;
  }
}

/** Takes `<file>.lock` exclusively (O_EXCL), so writers in different processes do not interleave. */
async function acquireLock(lockPath: string): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  await mkdir(path.dirname(lockPath), { recursive: true });
  for (;;) {
    try {
      const handle = await open(lockPath, "wx", 0o600);
      try {
        await handle.writeFile(String(process.pid), "utf8");
      } finally {
        await handle.close();
      }
      return;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
    }
    if (await lockIsStale(lockPath)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockPath}`);
    await sleep(10 + Math.floor(Math.random() * 20));
  }
}

/**
 * The store file with serialized read-modify-write: one update at a time in
 * this process (a promise chain) and across processes (a lock file). Reads take
 * no lock; the atomic rename means they always see a complete file.
 */
export class CalendarFile {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly filePath: string) {}

  /** The current store, read fresh from disk. */
  read(): Promise<CalendarStore> {
    return loadStore(this.filePath);
  }

  /**
   * Runs `change` on the current store under the lock and persists the store it
   * returns, if any, before resolving. Nothing is written when `change`
   * returns no store or when anything throws before the rename.
   */
  update<T>(change: (store: CalendarStore) => { readonly store?: CalendarStore; readonly value: T }): Promise<T> {
    const run = this.tail.then(() => this.updateLocked(change));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async updateLocked<T>(
    change: (store: CalendarStore) => { readonly store?: CalendarStore; readonly value: T },
  ): Promise<T> {
    const lockPath = `${this.filePath}.lock`;
    await acquireLock(lockPath);
    try {
      const { store, value } = change(await loadStore(this.filePath));
      if (store !== undefined) await saveStore(this.filePath, store);
      return value;
    } finally {
      // A failed release must not turn an applied write into an error; a leftover lock naming this process is stale.
      await rm(lockPath, { force: true }).catch(() => undefined);
    }
  }
}
