/**
 * What the rules planner can do, said to the person it cannot help: one
 * sentence of what it does and two requests they could type, written for
 * their own courses. Every refusal of the rules planner ends with it, so a
 * request it does not understand is never answered with an abstention on
 * its raw words alone. Pure.
 */

/** The marker every refusal's "what I can do" sentence starts with (tests and the phrasing set look for it). */
export const CAN_DO = "What I can do:";
/** What the rules planner does, as the rest of the sentence after `CAN_DO`. */
const ABILITIES =
  "answer questions from your notes, make quizzes from a course's notes, " +
  "and plan study time (over days, or as sessions in your calendar)";

/** One sentence of what the rules planner does, and two example requests for `courses` (the user's first course). */
export function whatICanDo(courses: readonly string[]): string {
  const course = courses.find((name) => /^[a-z0-9_-]{1,16}$/.test(name));
  const examples = course
    ? [`Make a quiz from my ${course} notes`, `Schedule 2 hours of ${course} revision tomorrow at 18:00`]
    : ["What do my notes say about attention?", "Schedule 2 hours of attention tomorrow at 18:00"];
  return `${CAN_DO} ${ABILITIES}. For example: "${examples[0]}" or "${examples[1]}".`;
}
