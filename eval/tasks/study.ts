/**
 * Ten requests that need evidence and a schedule: divisions between topics
 * (integer shares, larger first, among topics a readable note names) and
 * plans over days (the schedule server's exact allocation), two of them
 * written to the calendar after the harness approves the review.
 */
import { foreignTo, type Task } from "../task.js";

const ALICE = { allowed_sources: ["cs301."], forbidden_sources: foreignTo("cs301") };
const BOB = { allowed_sources: ["db201."], forbidden_sources: foreignTo("db201") };

export const STUDY_TASKS: Task[] = [
  {
    id: "study-divide-attention",
    category: "study",
    title: "divide 180 min between three attention topics",
    user: "alice",
    request:
      "Use my revision notes to divide 180 minutes between self-attention, cross-attention and positional encoding",
    expect: {
      outcomes: ["answered"],
      ...ALICE,
      required_sources: ["cs301.self-attention", "cs301.cross-attention", "cs301.positional-encoding"],
      allocation: {
        entries: [
          ["self-attention", 60],
          ["cross-attention", 60],
          ["positional encoding", 60],
        ],
        total: 180,
      },
    },
  },
  {
    id: "study-divide-uneven",
    category: "study",
    title: "divide 100 min between three topics (34/33/33)",
    user: "alice",
    request: "Divide 100 minutes between dropout, backpropagation and word embeddings using my notes",
    expect: {
      outcomes: ["answered"],
      ...ALICE,
      required_sources: ["cs301.dropout", "cs301.backpropagation", "cs301.word-embeddings"],
      allocation: {
        entries: [
          ["dropout", 34],
          ["backpropagation", 33],
          ["word embeddings", 33],
        ],
        total: 100,
      },
    },
  },
  {
    id: "study-divide-unsupported-topic",
    category: "study",
    title: "divide 180 min where one topic has no note",
    user: "alice",
    request: "Divide 180 minutes between self-attention, cross-attention and thermodynamics using my notes",
    expect: {
      outcomes: ["answered"],
      ...ALICE,
      required_sources: ["cs301.self-attention", "cs301.cross-attention"],
      allocation: {
        entries: [
          ["self-attention", 90],
          ["cross-attention", 90],
        ],
        total: 180,
        zero_labels: ["thermodynamics"],
      },
    },
  },
  {
    id: "study-divide-databases",
    category: "study",
    title: "divide 120 min between three database topics",
    user: "bob",
    request: "Divide 120 minutes between deadlocks, MVCC and hash indexes using my notes",
    expect: {
      outcomes: ["answered"],
      ...BOB,
      required_sources: ["db201.deadlocks", "db201.mvcc", "db201.hash-indexes"],
      allocation: {
        entries: [
          ["deadlocks", 40],
          ["MVCC", 40],
          ["hash indexes", 40],
        ],
        total: 120,
      },
    },
  },
  {
    id: "study-divide-two",
    category: "study",
    title: "divide 90 min between two normal forms",
    user: "bob",
    request: "Divide 90 minutes between BCNF and third normal form using my notes",
    expect: {
      outcomes: ["answered"],
      ...BOB,
      required_sources: ["db201.bcnf", "db201.third-normal-form"],
      allocation: {
        entries: [
          ["BCNF", 45],
          ["third normal form", 45],
        ],
        total: 90,
      },
    },
  },
  {
    id: "study-plan-attention",
    category: "study",
    title: "plan 120 min of attention over 3 days",
    user: "alice",
    request: "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day",
    expect: {
      outcomes: ["answered"],
      ...ALICE,
      allocation: {
        entries: [
          ["day 1", 40],
          ["day 2", 40],
          ["day 3", 40],
        ],
        total: 120,
      },
    },
  },
  {
    id: "study-plan-retrieval",
    category: "study",
    title: "plan 121 min of retrieval over 3 days (41/40/40)",
    user: "alice",
    request: "Use my notes to plan 121 minutes of retrieval study over 3 days, at most 60 minutes a day",
    expect: {
      outcomes: ["answered"],
      ...ALICE,
      allocation: {
        entries: [
          ["day 1", 41],
          ["day 2", 40],
          ["day 3", 40],
        ],
        total: 121,
      },
    },
  },
  {
    id: "study-plan-transactions",
    category: "study",
    title: "plan 150 min of transactions over 3 days",
    user: "bob",
    request: "Use my notes to plan 150 minutes of transactions study over 3 days, at most 60 minutes a day",
    expect: {
      outcomes: ["answered"],
      ...BOB,
      allocation: {
        entries: [
          ["day 1", 50],
          ["day 2", 50],
          ["day 3", 50],
        ],
        total: 150,
      },
    },
  },
  {
    id: "study-calendar-attention",
    category: "study",
    title: "plan 120 min over 3 days into the calendar (approved)",
    user: "alice",
    request:
      "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
      "starting 2026-12-02 at 18:00 UTC, and put it in my calendar",
    review: "approve",
    expect: { outcomes: ["answered"], ...ALICE, calendar_minutes: [40, 40, 40] },
  },
  {
    id: "study-calendar-locking",
    category: "study",
    title: "plan 90 min over 2 days into the calendar (approved)",
    user: "bob",
    request:
      "Use my notes to plan 90 minutes of locking study over 2 days, at most 60 minutes a day, " +
      "starting 2026-12-03 at 09:00 UTC, and put it in my calendar",
    review: "approve",
    expect: { outcomes: ["answered"], ...BOB, calendar_minutes: [45, 45] },
  },
];
