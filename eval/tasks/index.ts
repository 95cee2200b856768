/** The task suite: every task, in report order. */
import type { Task } from "../task.js";
import { CASEOPS_TASKS } from "./caseops.js";
import { FAILURE_TASKS } from "./failures.js";
import { NOTES_TASKS } from "./notes.js";
import { STUDY_TASKS } from "./study.js";

export const TASKS: readonly Task[] = [...NOTES_TASKS, ...STUDY_TASKS, ...FAILURE_TASKS, ...CASEOPS_TASKS];
