/**
 * `hostile`: a model (or a compromised endpoint) sending what no parser
 * should trust. At a seeded share of turns it breaks the careful move:
 * argument text that is not JSON, argument text over the host's 64 KiB
 * limit, control and bidi characters inside arguments, and answers carrying
 * NUL and bidi overrides. The agent must refuse each with a typed error and
 * lose nothing (no 500, no unstorable checkpoint).
 */
import type { AttemptCounts } from "../attempts.js";
import type { Draws } from "../random.js";
import { carefulMove } from "./careful.js";
import { argumentsOf, type Profile, type SimulatedCall, type SimulatedMove } from "./profile.js";

/** Share of turns at which it misbehaves. */
const HOSTILE_CHANCE = 0.6;
/** Over the host's argument limit (64 KiB). */
const OVERSIZED_CHARS = 70_000;
const CONTROL = "\u0000\u0007\u202e";

type Breakage = "malformed" | "oversized" | "control";
const BREAKAGES: readonly Breakage[] = ["malformed", "oversized", "control"];
const COUNTED: Record<Breakage, keyof AttemptCounts> = {
  malformed: "malformed_arguments",
  oversized: "oversized_arguments",
  control: "control_characters",
};

function broken(call: SimulatedCall, breakage: Breakage): SimulatedCall {
  const args = argumentsOf(call) ?? {};
  switch (breakage) {
    case "malformed":
      // Truncated mid-object, as a cut-off stream would leave it.
      return {
        name: call.name,
        argumentText: `${call.argumentText.slice(0, Math.max(1, call.argumentText.length - 2))}, "`,
      };
    case "oversized":
      return { name: call.name, argumentText: JSON.stringify({ ...args, padding: "x".repeat(OVERSIZED_CHARS) }) };
    case "control": {
      const key = Object.keys(args).find((name) => typeof args[name] === "string");
      const spoiled = key ? { ...args, [key]: `${String(args[key])}${CONTROL}` } : { ...args, [`note${CONTROL}`]: "x" };
      return { name: call.name, argumentText: JSON.stringify(spoiled) };
    }
  }
}

function spoil(move: SimulatedMove, draws: Draws): { move: SimulatedMove; attempts: Partial<AttemptCounts> } {
  if (!draws.chance("hostile", HOSTILE_CHANCE)) return { move, attempts: {} };
  if (move.type === "tool_calls" && move.calls.length > 0) {
    const breakage = draws.pick("breakage", BREAKAGES);
    const [first, ...rest] = move.calls;
    if (!first) return { move, attempts: {} };
    return { move: { ...move, calls: [broken(first, breakage), ...rest] }, attempts: { [COUNTED[breakage]]: 1 } };
  }
  if (move.type === "final")
    return { move: { ...move, answer: `${move.answer}${CONTROL}` }, attempts: { control_characters: 1 } };
  return { move, attempts: {} };
}

export const hostile: Profile = {
  name: "hostile",
  description:
    "sends malformed argument JSON, arguments over the 64 KiB limit, " +
    "control and bidi characters in arguments and answers (on a seeded share of turns)",
  reply: (conversation, draws) => spoil(carefulMove(conversation), draws),
};
