/**
 * CaseOps (Streamable HTTP, task tokens): C-102 (complete once an alias is
 * resolved) and three variants: complete as filed, missing with no alias,
 * and another tenant's case, which must look exactly like a missing one.
 */
import type { Task } from "../task.js";

const investigate = (caseId: string) => `Investigate claim ${caseId}: are its documents complete?`;

export const CASEOPS_TASKS: Task[] = [
  {
    id: "caseops-c102-alias",
    category: "caseops",
    title: "C-102: complete after alias normalization",
    user: "dana",
    request: investigate("C-102"),
    expect: {
      outcomes: ["answered"],
      answer_prefix: "DOCUMENTS_COMPLETE_AFTER_NORMALIZATION",
      required_sources: ["case:C-102@v3", "policy:motor-2026.1", "alias:DOC-7781"],
      allowed_sources: ["case:C-102", "policy:", "alias:"],
    },
  },
  {
    id: "caseops-c101-complete",
    category: "caseops",
    title: "C-101: complete as filed",
    user: "dana",
    request: investigate("C-101"),
    expect: {
      outcomes: ["answered"],
      answer_prefix: "DOCUMENTS_COMPLETE:",
      required_sources: ["case:C-101@v4", "policy:motor-2026.1"],
      allowed_sources: ["case:C-101", "policy:"],
    },
  },
  {
    id: "caseops-c103-missing",
    category: "caseops",
    title: "C-103: a document missing, no alias covers it",
    user: "dana",
    request: investigate("C-103"),
    expect: {
      outcomes: ["answered"],
      answer_prefix: "DOCUMENTS_MISSING",
      required_sources: ["case:C-103@v2", "policy:motor-2026.1"],
      allowed_sources: ["case:C-103", "policy:", "alias:"],
    },
  },
  {
    id: "caseops-cross-tenant",
    category: "caseops",
    title: "C-102 asked by another tenant (globex)",
    user: "gil",
    request: investigate("C-102"),
    expect: { outcomes: ["abstained", "needs_human"], forbidden_sources: ["case:", "policy:", "alias:", "C-102"] },
  },
];
