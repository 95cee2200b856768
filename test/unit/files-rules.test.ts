/** The rules planner's file branch (src/domains/files/rules.ts): which requests read which file, and the answer. */
import { describe, expect, it } from "vitest";
import { decideFileRead, fileToRead } from "../../src/domains/files/rules.js";

const call = (name: string, args: Record<string, unknown>) => ({
  call_id: "c1",
  name,
  raw_arguments: JSON.stringify(args),
});

describe("fileToRead", () => {
  it.each([
    ["read welcome.txt", "welcome.txt"],
    ["Please show me notes/exam.md", "notes/exam.md"],
    ["what is in data.csv?", "data.csv"],
  ])("%j reads %j", (request, file) => expect(fileToRead(request)).toBe(file));

  it.each(["read ../package.json", "write welcome.txt", "read my notes", "welcome.txt", "read a.exe"])(
    "%j reads nothing",
    (request) => expect(fileToRead(request)).toBeUndefined(),
  );
});

describe("decideFileRead", () => {
  it("reads first, then quotes the text, or says why it could not", () => {
    expect(decideFileRead("welcome.txt", [], call)).toEqual({
      type: "tool_calls",
      calls: [call("read_text_file", { path: "welcome.txt" })],
    });
    const read = { tool: "read_text_file", ok: true, structured: { content: "Hello.\n" } };
    expect(decideFileRead("welcome.txt", [read], call)).toEqual({
      type: "final",
      answer: "welcome.txt says:\nHello.",
      citations: [],
      abstained: false,
    });
    const refused = {
      tool: "read_text_file",
      ok: false,
      structured: undefined,
      code: "tool_failed",
      message: "ENOENT",
    };
    expect(decideFileRead("gone.txt", [refused], call)).toMatchObject({ type: "final", abstained: true });
  });
});
