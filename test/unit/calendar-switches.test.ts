/**
 * The calendar server's test switches (tools/calendar/switches.ts) and its confirmation step (confirm.ts), without
 * I/O; the fail-once marker file is exercised by test/int/calendar-round-trips.test.ts.
 */
import { describe, expect, it } from "vitest";
import { confirmCreate, confirmSettings } from "../../tools/calendar/confirm.js";
import { parseSwitches, takeFailure } from "../../tools/calendar/switches.js";

describe("calendar fail switches", () => {
  it("applies to every call by default, to the first N with a count", () => {
    const every = parseSwitches({ WARRANT_CALENDAR_FAIL: "timeout" });
    expect([takeFailure(every), takeFailure(every), takeFailure(every)]).toEqual(["timeout", "timeout", "timeout"]);
    const counted = parseSwitches({ WARRANT_CALENDAR_FAIL: "lose_response", WARRANT_CALENDAR_FAIL_COUNT: "1" });
    expect([takeFailure(counted), takeFailure(counted)]).toEqual(["lose_response", undefined]);
    expect(takeFailure(parseSwitches({}))).toBeUndefined();
  });

  it("refuses unknown values", () => {
    expect(() => parseSwitches({ WARRANT_CALENDAR_FAIL: "explode" })).toThrow(/unknown WARRANT_CALENDAR_FAIL/);
    expect(() => parseSwitches({ WARRANT_CALENDAR_FAIL_COUNT: "0" })).toThrow(/invalid WARRANT_CALENDAR_FAIL_COUNT/);
    expect(() => parseSwitches({ WARRANT_CALENDAR_STATUS_FAIL: "yes" })).toThrow(/WARRANT_CALENDAR_STATUS_FAIL/);
    expect(() => confirmSettings({ WARRANT_CALENDAR_CONFIRM: "yes" })).toThrow(/invalid WARRANT_CALENDAR_CONFIRM/);
  });
});

describe("calendar confirmation", () => {
  const on = confirmSettings({ WARRANT_CALENDAR_CONFIRM: "1" });

  it("writes without asking when it is off", async () => {
    expect(await confirmCreate(confirmSettings({}), "v2", {}, "Revise")).toEqual({ kind: "confirmed" });
  });

  it("on 2026-07-28 asks with input_required first, then reads the answer from inputResponses", async () => {
    const asked = await confirmCreate(on, "v2", { mcpReq: {} }, "Revise");
    expect(asked).toMatchObject({
      kind: "ask",
      result: { resultType: "input_required", inputRequests: { confirm: { method: "elicitation/create" } } },
    });
    const answered = (response: unknown) => confirmCreate(on, "v2", { mcpReq: { inputResponses: response } }, "x");
    expect(await answered({ confirm: { action: "accept", content: { confirm: true } } })).toEqual({
      kind: "confirmed",
    });
    expect(await answered({ confirm: { action: "accept", content: { confirm: false } } })).toEqual({
      kind: "refused",
      action: "not confirmed",
    });
    expect(await answered({ confirm: { action: "decline" } })).toEqual({ kind: "refused", action: "decline" });
  });

  it("on 2025-11-25 elicits; a client that cannot elicit gets nothing written", async () => {
    const accepting = { sendRequest: async () => ({ action: "accept", content: { confirm: true } }) };
    expect(await confirmCreate(on, "v1", accepting, "Revise")).toEqual({ kind: "confirmed" });
    const unable = {
      sendRequest: async () => {
        throw new Error("Client does not support elicitation");
      },
    };
    expect(await confirmCreate(on, "v1", unable, "Revise")).toEqual({ kind: "refused", action: "no elicitation" });
  });
});
