/**
 * Unit tests of the calendar store: validation, idempotent creation, key reuse,
 * user isolation, listing, and the atomic file round trip.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CalendarFile,
  CreateStudyEventInputSchema,
  CreateStudyEventOutputSchema,
  GetWriteStatusOutputSchema,
  KEY_REUSED_MESSAGE,
  ListEventsInputSchema,
  checkEventWindow,
  emptyStore,
  getWriteStatus,
  isKnownTimeZone,
  listEvents,
  loadStore,
  parseInstant,
  planCreate,
  saveStore,
  type CalendarStore,
  type CreateContext,
  type CreatePlan,
  type CreateStudyEventInput,
} from "../../tools/calendar/calendar.js";

/** A deterministic clock and id source. */
function testContext(): CreateContext {
  let next = 0;
  return {
    now: () => new Date("2025-03-01T08:00:00.000Z"),
    newEventId: () => `evt_${(next += 1)}`,
  };
}

function request(overrides: Partial<CreateStudyEventInput> = {}): CreateStudyEventInput {
  return {
    user_id: "alice",
    idempotency_key: "key-0001",
    title: "Revise attention",
    start: "2025-03-03T18:00:00+01:00",
    end: "2025-03-03T19:30:00+01:00",
    timezone: "Europe/Berlin",
    calendar: "study",
    ...overrides,
  };
}

/** Applies a plan the way the server does: only `created` changes the store. */
function apply(store: CalendarStore, plan: CreatePlan): CalendarStore {
  return plan.kind === "created" ? plan.store : store;
}

describe("date-time and time-zone validation", () => {
  it.each([
    ["2025-03-03T18:00:00+01:00", Date.UTC(2025, 2, 3, 17)],
    ["2025-03-03T17:00:00Z", Date.UTC(2025, 2, 3, 17)],
    ["2025-03-03T17:00Z", Date.UTC(2025, 2, 3, 17)],
    ["2025-03-03T17:00:00.250Z", Date.UTC(2025, 2, 3, 17, 0, 0, 250)],
    ["2024-02-29T12:00:00-05:30", Date.UTC(2024, 1, 29, 17, 30)],
  ])("parses %s", (text, expected) => {
    expect(parseInstant(text)).toBe(expected);
  });

  it.each([
    "2025-03-03",
    "2025-03-03T18:00:00",
    "2025-03-03 18:00:00Z",
    "2025-02-30T10:00:00Z",
    "2025-02-29T10:00:00Z",
    "2025-13-01T10:00:00Z",
    "2025-01-01T24:00:00Z",
    "2025-01-01T10:60:00Z",
    "2025-01-01T10:00:00+24:00",
    "2025-01-01T10:00:00+0100",
    "tomorrow at six",
    "",
  ])("rejects %j", (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });

  it("accepts IANA zones and rejects unknown names and offsets", () => {
    expect(isKnownTimeZone("Europe/Berlin")).toBe(true);
    expect(isKnownTimeZone("UTC")).toBe(true);
    expect(isKnownTimeZone("America/Argentina/Buenos_Aires")).toBe(true);
    expect(isKnownTimeZone("Mars/Olympus_Mons")).toBe(false);
    expect(isKnownTimeZone("+01:00")).toBe(false);
    expect(isKnownTimeZone("")).toBe(false);
  });
});

describe("CreateStudyEventInputSchema", () => {
  it("accepts a valid request unchanged", () => {
    expect(CreateStudyEventInputSchema.parse(request())).toEqual(request());
  });

  it.each([
    ["an unknown time zone", { timezone: "Europe/Atlantis" }],
    ["an offset as time zone", { timezone: "+01:00" }],
    ["a start without offset", { start: "2025-03-03T18:00:00" }],
    ["a nonexistent day", { end: "2025-02-30T19:00:00Z" }],
    ["a date-only end", { end: "2025-03-03" }],
    ["a short idempotency key", { idempotency_key: "short" }],
    ["a key with spaces", { idempotency_key: "key with spaces" }],
    ["a 129-character key", { idempotency_key: "k".repeat(129) }],
    ["an empty title", { title: "" }],
    ["a blank title", { title: "   " }],
    ["a 201-character title", { title: "t".repeat(201) }],
    ["an upper-case calendar", { calendar: "Study" }],
    ["a bad user id", { user_id: "Alice Smith" }],
  ])("rejects %s", (_label, overrides) => {
    expect(CreateStudyEventInputSchema.safeParse(request(overrides)).success).toBe(false);
  });

  it("accepts the longest key and title", () => {
    expect(
      CreateStudyEventInputSchema.safeParse(request({ idempotency_key: "k".repeat(128), title: "t".repeat(200) }))
        .success,
    ).toBe(true);
  });

  it("accepts a description up to 2000 characters with newlines, and refuses longer or control characters", () => {
    expect(
      CreateStudyEventInputSchema.safeParse(request({ description: `Topic: attention\n${"d".repeat(1_982)}` })).success,
    ).toBe(true);
    expect(CreateStudyEventInputSchema.safeParse(request({ description: "d".repeat(2_001) })).success).toBe(false);
    expect(CreateStudyEventInputSchema.safeParse(request({ description: "nul \u0000 here" })).success).toBe(false);
    expect(CreateStudyEventInputSchema.safeParse(request({ description: "lone \ud800 surrogate" })).success).toBe(
      false,
    );
    expect(CreateStudyEventInputSchema.safeParse(request({ title: "tab\tin title" })).success).toBe(false);
  });

  it("rejects extra keys", () => {
    expect(CreateStudyEventInputSchema.safeParse({ ...request(), location: "library" }).success).toBe(false);
  });
});

describe("event window", () => {
  it("rejects end before or equal to start", () => {
    expect(checkEventWindow("2025-03-03T18:00:00Z", "2025-03-03T17:00:00Z")?.message).toBe("end must be after start");
    expect(checkEventWindow("2025-03-03T18:00:00Z", "2025-03-03T18:00:00Z")?.code).toBe("invalid_arguments");
    // Same wall-clock time, but the offset puts the end an hour before the start.
    expect(checkEventWindow("2025-03-03T18:00:00Z", "2025-03-03T18:30:00+01:00")?.code).toBe("invalid_arguments");
  });

  it("allows exactly 24 hours and rejects more", () => {
    expect(checkEventWindow("2025-03-03T00:00:00Z", "2025-03-04T00:00:00Z")).toBeUndefined();
    expect(checkEventWindow("2025-03-03T00:00:00Z", "2025-03-04T00:00:01Z")?.message).toBe(
      "event must not be longer than 24 hours",
    );
  });

  it("rejects a bad ISO string passed to the pure store directly", () => {
    const plan = planCreate(emptyStore(), request({ start: "03/03/2025 18:00" }), testContext());
    expect(plan).toMatchObject({ kind: "rejected", error: { code: "invalid_arguments" } });
  });

  it("rejects an over-long or inverted event through planCreate without touching the store", () => {
    const store = emptyStore();
    const tooLong = planCreate(store, request({ end: "2025-03-04T19:30:00+01:00" }), testContext());
    const inverted = planCreate(store, request({ end: "2025-03-03T17:00:00+01:00" }), testContext());
    expect(tooLong.kind).toBe("rejected");
    expect(inverted.kind).toBe("rejected");
    expect(store.events).toHaveLength(0);
  });
});

describe("idempotent creation", () => {
  it("creates once, then replays the original event with replayed: true", () => {
    const context = testContext();
    const first = planCreate(emptyStore(), request(), context);
    expect(first.kind).toBe("created");
    if (first.kind !== "created") return;
    expect(first.result.replayed).toBe(false);
    expect(first.result.event).toEqual({
      event_id: "evt_1",
      user_id: "alice",
      title: "Revise attention",
      start: "2025-03-03T18:00:00+01:00",
      end: "2025-03-03T19:30:00+01:00",
      timezone: "Europe/Berlin",
      calendar: "study",
      idempotency_key: "key-0001",
      created_at: "2025-03-01T08:00:00.000Z",
    });
    expect(CreateStudyEventOutputSchema.safeParse(first.result).success).toBe(true);

    const second = planCreate(first.store, request(), context);
    expect(second).toEqual({ kind: "replayed", result: { event: first.result.event, replayed: true } });
    expect(apply(first.store, second).events).toHaveLength(1);
  });

  it("treats the same instants written with another offset as the same arguments", () => {
    const first = planCreate(emptyStore(), request(), testContext());
    if (first.kind !== "created") throw new Error("expected created");
    const retry = planCreate(
      first.store,
      request({ start: "2025-03-03T17:00:00Z", end: "2025-03-03T18:30:00Z" }),
      testContext(),
    );
    expect(retry.kind).toBe("replayed");
  });

  it.each([
    ["title", { title: "Something else" }],
    ["start", { start: "2025-03-03T18:15:00+01:00" }],
    ["end", { end: "2025-03-03T20:00:00+01:00" }],
    ["timezone", { timezone: "Europe/Paris" }],
    ["calendar", { calendar: "exams" }],
  ])("rejects a reused key with a different %s and writes nothing", (_field, overrides) => {
    const first = planCreate(emptyStore(), request(), testContext());
    if (first.kind !== "created") throw new Error("expected created");
    const reused = planCreate(first.store, request(overrides), testContext());
    expect(reused).toEqual({ kind: "rejected", error: { code: "invalid_arguments", message: KEY_REUSED_MESSAGE } });
    expect(apply(first.store, reused).events).toHaveLength(1);
  });

  it("stores the description and treats another description under the same key as other arguments", () => {
    const context = testContext();
    const created = planCreate(emptyStore(), request({ description: "Topic: attention" }), context);
    if (created.kind !== "created") throw new Error("expected a created event");
    expect(created.result.event.description).toBe("Topic: attention");
    const store = apply(emptyStore(), created);
    expect(planCreate(store, request({ description: "Topic: attention" }), context).kind).toBe("replayed");
    const changed = planCreate(store, request({ description: "Topic: something else" }), context);
    expect(changed.kind === "rejected" && changed.error.message).toBe(KEY_REUSED_MESSAGE);
    expect(planCreate(store, request(), context).kind).toBe("rejected");
  });

  it("creates distinct events for distinct keys and does not mutate the input store", () => {
    const context = testContext();
    const empty = emptyStore();
    const first = planCreate(empty, request(), context);
    if (first.kind !== "created") throw new Error("expected created");
    const second = planCreate(first.store, request({ idempotency_key: "key-0002" }), context);
    if (second.kind !== "created") throw new Error("expected created");
    expect(second.store.events.map((event) => event.event_id)).toEqual(["evt_1", "evt_2"]);
    expect(empty.events).toHaveLength(0);
    expect(first.store.events).toHaveLength(1);
  });

  it("reports write status per key", () => {
    const before = emptyStore();
    expect(getWriteStatus(before, { user_id: "alice", idempotency_key: "key-0001" })).toEqual({ applied: false });
    const plan = planCreate(before, request(), testContext());
    if (plan.kind !== "created") throw new Error("expected created");
    const status = getWriteStatus(plan.store, { user_id: "alice", idempotency_key: "key-0001" });
    expect(status).toEqual({ applied: true, event: plan.result.event });
    expect(GetWriteStatusOutputSchema.safeParse(status).success).toBe(true);
  });
});

describe("user isolation", () => {
  function twoUsers(): CalendarStore {
    const context = testContext();
    let store = emptyStore();
    for (const input of [
      request(),
      request({ user_id: "bob", title: "Bob's block" }), // Same key, different user: a separate event.
      request({
        idempotency_key: "key-0002",
        start: "2025-03-02T09:00:00Z",
        end: "2025-03-02T10:00:00Z",
        calendar: "exams",
      }),
    ]) {
      store = apply(store, planCreate(store, input, context));
    }
    return store;
  }

  it("scopes idempotency keys per user", () => {
    const store = twoUsers();
    expect(store.events).toHaveLength(3);
    const bob = getWriteStatus(store, { user_id: "bob", idempotency_key: "key-0001" });
    expect(bob.event?.title).toBe("Bob's block");
    expect(getWriteStatus(store, { user_id: "bob", idempotency_key: "key-0002" })).toEqual({ applied: false });
    expect(getWriteStatus(store, { user_id: "carol", idempotency_key: "key-0001" })).toEqual({ applied: false });
  });

  it("lists only the caller's events, sorted by start", () => {
    const store = twoUsers();
    const alice = listEvents(store, { user_id: "alice" });
    expect(alice.ok && alice.result.events.map((event) => event.idempotency_key)).toEqual(["key-0002", "key-0001"]);
    const bob = listEvents(store, { user_id: "bob" });
    expect(bob.ok && bob.result.events.map((event) => event.title)).toEqual(["Bob's block"]);
    const carol = listEvents(store, { user_id: "carol" });
    expect(carol.ok && carol.result.events).toEqual([]);
  });

  it("filters by calendar and by an overlapping window", () => {
    const store = twoUsers();
    const exams = listEvents(store, { user_id: "alice", calendar: "exams" });
    expect(exams.ok && exams.result.events.map((event) => event.calendar)).toEqual(["exams"]);
    // 2025-03-03 17:00Z–18:30Z overlaps a window starting at 18:00Z; the 2 March event does not.
    const window = listEvents(store, { user_id: "alice", from: "2025-03-03T18:00:00Z", to: "2025-03-04T00:00:00Z" });
    expect(window.ok && window.result.events.map((event) => event.idempotency_key)).toEqual(["key-0001"]);
    const touching = listEvents(store, { user_id: "alice", from: "2025-03-03T18:30:00Z" });
    expect(touching.ok && touching.result.events).toEqual([]);
  });

  it("rejects an inverted window and malformed bounds", () => {
    const inverted = listEvents(emptyStore(), {
      user_id: "alice",
      from: "2025-03-04T00:00:00Z",
      to: "2025-03-03T00:00:00Z",
    });
    expect(inverted).toMatchObject({ ok: false, error: { code: "invalid_arguments" } });
    expect(ListEventsInputSchema.safeParse({ user_id: "alice", from: "yesterday" }).success).toBe(false);
    expect(ListEventsInputSchema.safeParse({ user_id: "alice", other: 1 }).success).toBe(false);
  });
});

describe("store file", () => {
  let directory: string;
  let filePath: string;

  beforeEach(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), "calendar-unit-"));
    filePath = path.join(directory, "nested", "calendar.json");
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("reads a missing file as empty and creates it on first write, leaving no temp or lock files", async () => {
    expect(await loadStore(filePath)).toEqual(emptyStore());
    const file = new CalendarFile(filePath);
    const plan = await file.update<CreatePlan>((store) => {
      const decided = planCreate(store, request(), testContext());
      return decided.kind === "created" ? { store: decided.store, value: decided } : { value: decided };
    });
    expect(plan.kind).toBe("created");
    const saved = JSON.parse(await readFile(filePath, "utf8")) as CalendarStore;
    expect(saved.events).toHaveLength(1);
    expect(await readdir(path.dirname(filePath))).toEqual(["calendar.json"]);
  });

  it("serializes concurrent updates with one key into exactly one event", async () => {
    const file = new CalendarFile(filePath);
    const context = testContext();
    const plans = await Promise.all(
      Array.from({ length: 10 }, () =>
        file.update<CreatePlan>((store) => {
          const decided = planCreate(store, request(), context);
          return decided.kind === "created" ? { store: decided.store, value: decided } : { value: decided };
        }),
      ),
    );
    expect(plans.filter((plan) => plan.kind === "created")).toHaveLength(1);
    expect(plans.filter((plan) => plan.kind === "replayed")).toHaveLength(9);
    expect((await file.read()).events).toHaveLength(1);
  });

  it("round-trips through saveStore and rejects a corrupt file", async () => {
    const plan = planCreate(emptyStore(), request(), testContext());
    if (plan.kind !== "created") throw new Error("expected created");
    await saveStore(filePath, plan.store);
    expect(await loadStore(filePath)).toEqual(plan.store);
    await writeFile(filePath, "{not json", "utf8");
    await expect(loadStore(filePath)).rejects.toThrow(/not valid JSON/);
    await writeFile(filePath, JSON.stringify({ version: 2, events: [] }), "utf8");
    await expect(loadStore(filePath)).rejects.toThrow(/invalid calendar store/);
  });

  it("takes over a lock left behind by a dead process", async () => {
    await saveStore(filePath, emptyStore());
    await writeFile(`${filePath}.lock`, "999999999", "utf8");
    const file = new CalendarFile(filePath);
    const value = await file.update(() => ({ store: emptyStore(), value: "done" }));
    expect(value).toBe("done");
    expect(await readdir(path.dirname(filePath))).toEqual(["calendar.json"]);
  });
});
