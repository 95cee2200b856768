/**
 * The shipped domains as the composition root wires them: the context
 * providers plan asks at the start of a run (and the study domain's keeper
 * of unanswered questions, read by the next message of the thread). A new domain adds its provider
 * here; the control plane does not change.
 */
import type { ContextProvider } from "../ports.js";
import { courseContextProvider } from "./notes/course-context.js";
import { studyFollowUpProvider } from "./study/follow-up.js";
import { studyProfileProvider } from "./study/profile.js";

export const contextProviders: readonly ContextProvider[] = [
  courseContextProvider,
  studyFollowUpProvider,
  studyProfileProvider,
];
