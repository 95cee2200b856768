/**
 * The checkpoint serializer's fast path (src/checkpoint/serde.ts) must write
 * exactly the bytes LangGraph's JsonPlusSerializer writes, and leave every
 * value it does not handle to that serializer.
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, test } from "vitest";
import { isPlainJson, WarrantSerializer } from "../../src/checkpoint/serde.js";

const stock = new JsonPlusSerializer();
const ours = new WarrantSerializer();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const plain: unknown[] = [
  null,
  0,
  -0,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  "",
  "caf\u00e9 \u{1f600}",
  "nul \u0000 and lone \ud800 surrogate",
  true,
  [],
  [1, "two", null, [3]],
  { a: 1, b: { c: [true, { d: "e" }] } },
  Object.assign(Object.create(null), { bare: 1 }),
  { toJSON: "a string, not a method" },
  new Date(0),
  { at: new Date(0), nested: [new Date(1)] },
  new AIMessage({
    content: "",
    tool_calls: [{ id: "c1", name: "search_notes", args: { query: "x", limit: 1 } }],
    id: "msg-1",
  }),
  [
    new ToolMessage({
      tool_call_id: "c1",
      name: "search_notes",
      content: '{"a":1}',
      artifact: { hits: [{ a: 1 }] },
      id: "msg-2",
    }),
  ],
  { toJSON: () => ({ inner: { toJSON: () => 1 } }) },
  {
    messages: [
      new AIMessage({
        content: "final",
        additional_kwargs: { warrant_result: { answer: "a", citations: [], abstained: false } },
      }),
    ],
  },
];

const notPlain: unknown[] = [
  undefined,
  { a: undefined },
  [1, undefined],
  // eslint-disable-next-line no-sparse-arrays
  [1, undefined, 3],
  new Map([["a", 1]]),
  new Set([1]),
  new Uint8Array([1, 2]),
  new Error("boom"),
  /x/g,
  { lg_name: "Send", node: "plan", args: {} },
  { nested: { deeper: new Map() } },
  { toJSON: () => ({ toJSON: () => 1 }) },
  { toJSON: () => ({ gone: undefined }) },
  () => 1,
  BigInt(1),
];

describe("WarrantSerializer", () => {
  test.each(plain.map((value) => [String(JSON.stringify(value)).slice(0, 60), value]))(
    "plain %s: the stock serializer's bytes",
    async (_label, value) => {
      expect(isPlainJson(value)).toBe(true);
      const [type, bytes] = await ours.dumpsTyped(value);
      const [stockType, stockBytes] = await stock.dumpsTyped(value);
      expect(type).toBe(stockType);
      expect(text(bytes)).toBe(text(stockBytes));
      expect(ours.dumpsTypedSync(value)).toEqual([type, bytes]);
    },
  );

  test.each(notPlain.map((value, index) => [index, value]))(
    "not plain #%s: left to the stock serializer",
    async (_index, value) => {
      expect(isPlainJson(value)).toBe(false);
      if (typeof value === "bigint" || typeof value === "function") return;
      const [type, bytes] = await ours.dumpsTyped(value);
      const [stockType, stockBytes] = await stock.dumpsTyped(value);
      expect(type).toBe(stockType);
      expect(text(bytes)).toBe(text(stockBytes));
    },
  );

  test("a cycle, or nesting past the depth limit, takes the stock path (which handles cycles)", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(isPlainJson(cyclic)).toBe(false);
    expect(text((await ours.dumpsTyped(cyclic))[1])).toBe(text((await stock.dumpsTyped(cyclic))[1]));
    let deep: unknown = "leaf";
    for (let level = 0; level < 100; level += 1) deep = { level: deep };
    expect(isPlainJson(deep)).toBe(false);
    expect(text((await ours.dumpsTyped(deep))[1])).toBe(text((await stock.dumpsTyped(deep))[1]));
  });

  test("what it writes, the stock serializer reads back", async () => {
    const value = { messages: [new AIMessage("hi")], count: 2, plain: { a: [1, 2] } };
    const [type, bytes] = await ours.dumpsTyped(value);
    const loaded = (await stock.loadsTyped(type, bytes)) as typeof value;
    expect(loaded.count).toBe(2);
    expect(loaded.plain).toEqual({ a: [1, 2] });
    expect(AIMessage.isInstance(loaded.messages[0])).toBe(true);
  });
});
