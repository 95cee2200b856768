/**
 * A second labelled set, written after the search and its cut-offs were
 * tuned on questions.ts, and never tuned on: new phrasings of the same kinds
 * over the same notes. Its figures are reported apart (the "fresh" row of the
 * Retrieval section), as the honest estimate for questions the tuning did not
 * see. Labelled from the notes' text. One question ("What does atomicity
 * mean?") was later tuned on and moved to the labelled set. Data only.
 *
 * Seen: merged into the calibration set (calibration.ts) on 2 December 2026
 * (issue 27, third round), after its misses had been read; no longer untuned.
 */
import { type LabelledQuestion, type Row, rows } from "./questions.js";

const CS301: Row[] = [
  [
    "f-cs-overfit",
    "alice",
    "paraphrase",
    "Why is my model great on training data but bad on new data?",
    "bias-variance",
  ],
  [
    "f-cs-attend",
    "alice",
    "paraphrase",
    "How does a transformer weigh each key against a query?",
    "scaled-dot-product-attention",
    "self-attention multi-head-attention",
  ],
  ["f-cs-sqrt-dk", "alice", "formula", "Why divide by the square root of d_k?", "scaled-dot-product-attention"],
  ["f-cs-class-loss", "alice", "paraphrase", "What loss should I use for a classifier?", "cross-entropy-loss"],
  [
    "f-cs-fast-vectors",
    "alice",
    "paraphrase",
    "How can vector search stay fast over millions of documents?",
    "approximate-nearest-neighbor",
    "dense-retrieval",
  ],
  ["f-cs-reranker", "alice", "direct", "What is the point of a reranker?", "reranking"],
  ["f-cs-recall-k", "alice", "direct", "What does recall at k measure?", "retrieval-evaluation"],
  ["f-cs-heads", "alice", "paraphrase", "Why use several attention heads instead of one?", "multi-head-attention"],
  ["f-cs-k1", "alice", "formula", "What does k1 control in BM25?", "bm25"],
  ["f-cs-lstm-forget", "alice", "absent", "How does an LSTM's forget gate work?", "abstain"],
  ["f-cs-temperature", "alice", "absent", "What is softmax temperature?", "abstain"],
  ["f-cs-wrong-hash", "alice", "wrong-course", "What do my db201 notes say about hash indexes?", "abstain"],
];

const DB201: Row[] = [
  ["f-db-hash-range", "bob", "paraphrase", "Why can't a hash index answer range queries?", "hash-indexes"],
  ["f-db-leftmost", "bob", "direct", "What is the leftmost-prefix rule?", "composite-indexes"],
  ["f-db-btree-pages", "bob", "paraphrase", "How many pages does a B+-tree lookup touch?", "b-tree-indexes"],
  ["f-db-phantom", "bob", "direct", "What is a phantom read?", "read-anomalies", "isolation-levels"],
  ["f-db-readers-block", "bob", "paraphrase", "Why don't readers block writers under MVCC?", "mvcc"],
  ["f-db-deadlock-break", "bob", "paraphrase", "How is a deadlock broken once it is found?", "deadlocks"],
  [
    "f-db-log-first",
    "bob",
    "paraphrase",
    "Why must the log record reach disk before the data page?",
    "write-ahead-logging",
  ],
  ["f-db-lossless", "bob", "direct", "When is a decomposition lossless?", "lossless-decomposition"],
  ["f-db-matview", "bob", "absent", "What is a materialized view?", "abstain"],
  ["f-db-replication", "bob", "absent", "How does database replication work?", "abstain"],
  ["f-db-midterm-q1", "bob", "unreleased", "What is the answer to question 1 of the midterm?", "abstain"],
];

const PH110: Row[] = [
  ["f-ph-watt", "pia", "direct", "What is a watt?", "power"],
  ["f-ph-inertial", "pia", "direct", "What is an inertial frame?", "newtons-first-law"],
  [
    "f-ph-suspension",
    "pia",
    "paraphrase",
    "Why does a critically damped car suspension not bounce?",
    "damped-oscillations",
  ],
  [
    "f-ph-spring-omega",
    "pia",
    "formula",
    "What is the angular frequency of a mass on a spring?",
    "simple-harmonic-motion",
  ],
  ["f-ph-explosion", "pia", "paraphrase", "Why is total momentum conserved in an explosion?", "linear-momentum"],
  ["f-ph-mgh", "pia", "formula", "What is mgh?", "potential-energy"],
  ["f-ph-angular-momentum", "pia", "absent", "What is angular momentum?", "abstain"],
  ["f-ph-rocket", "pia", "absent", "How does a rocket engine produce thrust?", "abstain"],
  ["f-ph-wrong-dense", "pia", "wrong-course", "What is dense retrieval?", "abstain"],
];

/** The fresh set, cs301 then db201 then ph110. */
export const FRESH_QUESTIONS: readonly LabelledQuestion[] = [
  ...rows("cs301", CS301),
  ...rows("db201", DB201),
  ...rows("ph110", PH110),
];
