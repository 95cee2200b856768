/**
 * The study profile of a run: its clock (the run's start), the user's time
 * zone (from their principal, when it names a zone this runtime knows) and
 * the courses they are enrolled in. Read once at the run's start, without
 * I/O; the rules planner resolves "tomorrow" against it and names the
 * user's courses in the examples of what it can do. A model planner is shown
 * nothing of it (its prompt does not change per run).
 */
import { z } from "zod";
import { grantsOf } from "../../auth/principal.js";
import type { ContextProvider } from "../../ports.js";
import type { DomainContext } from "../../state/domain-context.js";
import type { StudyClock } from "./relative.js";
import { isKnownZone } from "./time.js";

/** The provider's name: its key in the run's context. */
export const STUDY_PROFILE = "study.profile";

const ProfileSchema = z.object({
  now: z.number().int().nonnegative(),
  time_zone: z.string().max(64).nullable(),
  courses: z.array(z.string().max(64)).max(64),
});
export type StudyProfile = z.infer<typeof ProfileSchema>;

export const studyProfileProvider: ContextProvider = {
  name: STUDY_PROFILE,
  load: async ({ principal, now }) => {
    const zone = principal.time_zone !== undefined && isKnownZone(principal.time_zone) ? principal.time_zone : null;
    const profile: StudyProfile = { now, time_zone: zone, courses: [...grantsOf(principal, "courses")] };
    return { data: profile, model_note: null };
  },
};

/** The profile in a run's context, when it is one this domain recorded. */
export function profileOf(context: Record<string, DomainContext> | undefined): StudyProfile | undefined {
  const entry = context && Object.hasOwn(context, STUDY_PROFILE) ? context[STUDY_PROFILE] : undefined;
  const parsed = ProfileSchema.safeParse(entry?.data);
  return parsed.success ? parsed.data : undefined;
}

/** The clock a profile gives the parser. */
export function clockOf(profile: StudyProfile | undefined): StudyClock | undefined {
  return profile ? { now: profile.now, zone: profile.time_zone } : undefined;
}
