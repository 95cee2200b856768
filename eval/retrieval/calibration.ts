/**
 * The calibration set: every question the tuning has seen. The labelled set
 * (questions.ts), plus the fresh set (fresh.ts) and the first held-out set
 * (heldout.ts), both merged in on 2 December 2026 (issue 27, third round):
 * their misses had been read and fixed, so they no longer estimate unseen
 * questions. The cut-offs are calibrated on this set; the second held-out
 * set (heldout2.ts) is the untuned one. Data only.
 */
import { FRESH_QUESTIONS } from "./fresh.js";
import { HELD_OUT_QUESTIONS } from "./heldout.js";
import { type LabelledQuestion, QUESTIONS } from "./questions.js";

export const CALIBRATION_QUESTIONS: readonly LabelledQuestion[] = [
  ...QUESTIONS,
  ...FRESH_QUESTIONS,
  ...HELD_OUT_QUESTIONS,
];
