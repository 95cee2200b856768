/** Ten questions the notes answer: each must cite the note that answers it, and nothing a student may not read. */
import { foreignTo, type Task } from "../task.js";

const question = (id: string, user: "alice" | "bob", request: string, required: string[]): Task => ({
  id,
  category: "notes",
  title: request,
  user,
  request,
  expect: {
    outcomes: ["answered"],
    required_sources: required,
    allowed_sources: [user === "alice" ? "cs301." : "db201."],
    forbidden_sources: foreignTo(user === "alice" ? "cs301" : "db201"),
  },
});

export const NOTES_TASKS: Task[] = [
  question("notes-compare-attention", "alice", "Compare self-attention with cross-attention using my notes", [
    "cs301.self-attention",
    "cs301.cross-attention",
  ]),
  question("notes-bm25", "alice", "What is BM25 lexical ranking?", ["cs301.bm25"]),
  question("notes-dropout", "alice", "How does dropout regularize a network?", ["cs301.dropout"]),
  question("notes-positional-encoding", "alice", "Explain positional encoding", ["cs301.positional-encoding"]),
  question("notes-dense-retrieval", "alice", "What is dense retrieval?", ["cs301.dense-retrieval"]),
  question("notes-causal-masking", "alice", "What does causal masking do in decoders?", ["cs301.causal-masking"]),
  question("notes-isolation-levels", "bob", "What are the SQL isolation levels?", ["db201.isolation-levels"]),
  question("notes-two-phase-locking", "bob", "Explain two-phase locking", ["db201.two-phase-locking"]),
  question("notes-write-ahead-logging", "bob", "What is write-ahead logging for?", ["db201.write-ahead-logging"]),
  question("notes-bcnf", "bob", "What is Boyce-Codd normal form?", ["db201.bcnf"]),
];
