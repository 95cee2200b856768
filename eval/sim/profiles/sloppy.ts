/**
 * `sloppy`: roughly right, carelessly done. It starts from the careful move
 * and, by seeded chance at each turn, repeats an earlier search, asks for a
 * note of a course neither the request nor any result named, adds a field
 * the tool's schema does not declare, keeps searching after it has its
 * answer, and cites a ref it never read. Each of these is counted as
 * attempted; the agent must contain every one. A call refused for its extra
 * field it sends again without it, as a model reading the error would.
 */
import type { AttemptCounts } from "../attempts.js";
import type { Conversation } from "../conversation.js";
import type { Draws } from "../random.js";
import { carefulMove } from "./careful.js";
import { argumentsOf, jsonCall, type Profile, type SimulatedCall, type SimulatedMove } from "./profile.js";

/** How often each slip happens at a turn where it can. */
const SLIP_CHANCE = 0.5;
/** Course codes a careless model might guess (the shipped corpus's and one that does not exist). */
const COURSE_GUESSES = ["cs301", "db201", "ph110", "bio120"] as const;
/** A field no shipped tool declares. */
const UNKNOWN_FIELD = "verbose";
/** Marks the extra search made after the answer was ready, so it is made once per request. */
const AFTERTHOUGHT = "more about ";

type Slips = Partial<AttemptCounts>;

/** Courses the request or any result of the conversation named: asking for another is asking for the wrong one. */
function namedCourses(conversation: Conversation): Set<string> {
  const text = conversation.request + JSON.stringify(conversation.results.map((result) => result.body));
  return new Set([...text.matchAll(/\b([a-z]{2,8}[0-9]{3})\b/g)].map((match) => match[1] ?? ""));
}

function wrongCourse(conversation: Conversation, draws: Draws): string | undefined {
  const named = namedCourses(conversation);
  const candidates = COURSE_GUESSES.filter((course) => !named.has(course));
  return candidates.length > 0 ? draws.pick("wrong-course", candidates) : undefined;
}

function withWrongCourse(
  calls: SimulatedCall[],
  conversation: Conversation,
  draws: Draws,
  slips: Slips,
): SimulatedCall[] {
  const index = calls.findIndex((call) => call.name === "read_note");
  const read = index >= 0 ? calls[index] : undefined;
  const args = read ? argumentsOf(read) : undefined;
  const course = wrongCourse(conversation, draws);
  if (
    !read ||
    !args ||
    typeof args["note_id"] !== "string" ||
    course === undefined ||
    !draws.chance("slip:wrong-course", SLIP_CHANCE)
  )
    return calls;
  slips.wrong_course_request = 1;
  const slug = args["note_id"].split(".").slice(1).join(".") || "overview";
  return calls.map((call, position) =>
    position === index ? jsonCall(call.name, { ...args, note_id: `${course}.${slug}` }) : call,
  );
}

function withRepeat(calls: SimulatedCall[], conversation: Conversation, draws: Draws, slips: Slips): SimulatedCall[] {
  const earlier = conversation.calls.find((call) => call.name === "search_notes");
  if (!earlier || !draws.chance("slip:repeat", SLIP_CHANCE)) return calls;
  slips.repeated_call = 1;
  return [...calls, { name: earlier.name, argumentText: earlier.argumentText }];
}

function withUnknownField(
  calls: SimulatedCall[],
  conversation: Conversation,
  draws: Draws,
  slips: Slips,
): SimulatedCall[] {
  if (calls.length === 0 || !draws.chance("slip:field", SLIP_CHANCE)) return calls;
  const index = Math.floor(draws.unit("slip:field-call") * calls.length);
  const call = calls[index];
  const args = call ? argumentsOf(call) : undefined;
  const schema = conversation.tools.find((tool) => tool.name === call?.name)?.parameters["properties"];
  const declared = typeof schema === "object" && schema !== null && Object.hasOwn(schema, UNKNOWN_FIELD);
  if (!call || !args || declared) return calls;
  slips.unknown_argument_field = 1;
  return calls.map((each, position) =>
    position === index ? jsonCall(each.name, { ...args, [UNKNOWN_FIELD]: true }) : each,
  );
}

function spoilCalls(calls: SimulatedCall[], conversation: Conversation, draws: Draws, slips: Slips): SimulatedCall[] {
  return withUnknownField(
    withRepeat(withWrongCourse(calls, conversation, draws, slips), conversation, draws, slips),
    conversation,
    draws,
    slips,
  );
}

function spoilAnswer(
  move: Extract<SimulatedMove, { type: "final" }>,
  conversation: Conversation,
  draws: Draws,
  slips: Slips,
): SimulatedMove {
  const searched = conversation.tools.some((tool) => tool.name === "search_notes");
  const wentOn = conversation.calls.some(
    (call) => call.name === "search_notes" && String(argumentsOf(call)?.["query"] ?? "").startsWith(AFTERTHOUGHT),
  );
  if (!move.abstained && searched && !wentOn && draws.chance("slip:keep-going", SLIP_CHANCE)) {
    slips.call_after_answer = 1;
    return {
      type: "tool_calls",
      calls: [jsonCall("search_notes", { query: `${AFTERTHOUGHT}${conversation.request}`.slice(0, 200) })],
    };
  }
  if (!move.abstained && draws.chance("slip:invent", SLIP_CHANCE)) {
    const [course] = [...namedCourses(conversation)];
    slips.invented_citation = 1;
    return { ...move, citations: [...move.citations, `${course ?? "notes"}.summary-${draws.tag("invented", 6)}@1`] };
  }
  return move;
}

function errorCode(body: unknown): unknown {
  const error = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["error"] : undefined;
  return typeof error === "object" && error !== null ? (error as Record<string, unknown>)["code"] : undefined;
}

/** Sloppy, not stubborn: a call refused for its extra field is sent again without it, once. */
function repairMove(conversation: Conversation): SimulatedMove | undefined {
  for (const result of conversation.results) {
    if (result.ok || errorCode(result.body) !== "invalid_arguments") continue;
    const call = conversation.calls.find((each) => each.id === result.callId);
    if (!call?.args || !Object.hasOwn(call.args, UNKNOWN_FIELD)) continue;
    const { [UNKNOWN_FIELD]: _extra, ...repaired } = call.args;
    const again = jsonCall(call.name, repaired);
    if (!conversation.calls.some((each) => each.name === again.name && each.argumentText === again.argumentText))
      return { type: "tool_calls", calls: [again] };
  }
  return undefined;
}

export const sloppy: Profile = {
  name: "sloppy",
  description:
    "repeats searches, asks for the wrong course, adds unknown fields to arguments, " +
    "keeps going after it has the answer, invents a citation (each by seeded chance)",
  reply(conversation, draws) {
    const repair = repairMove(conversation);
    if (repair) return { move: repair, attempts: {} };
    const move = carefulMove(conversation);
    const slips: Slips = {};
    if (move.type === "tool_calls")
      return { move: { ...move, calls: spoilCalls(move.calls, conversation, draws, slips) }, attempts: slips };
    if (move.type === "final") return { move: spoilAnswer(move, conversation, draws, slips), attempts: slips };
    return { move, attempts: slips };
  },
};
