/**
 * The second held-out set (issue 27, third round): written and committed on
 * 2 December 2026 before any of the third round's changes (compound parts,
 * formula variables, gapped phrases, acronyms from note text) and before the
 * retrieval was run on it, and never tuned on. New phrasings of every kind
 * over the same notes, none copied from questions.ts, fresh.ts or the first
 * held-out set. Its figures are reported apart from the calibration set, as
 * the estimate for questions the tuning did not see. Labelled from the
 * notes' text (eval/fixtures/notes.json). Data only.
 */
import { type LabelledQuestion, type Row, rows } from "./questions.js";

const CS301: Row[] = [
  [
    "h2-cs-global-min",
    "alice",
    "paraphrase",
    "Does gradient descent always find the global minimum?",
    "gradient-descent",
  ],
  ["h2-cs-sgd-batch", "alice", "acronym", "What batch size is typical for SGD?", "stochastic-gradient-descent"],
  [
    "h2-cs-adam-own-step",
    "alice",
    "paraphrase",
    "How does Adam give each parameter its own step size?",
    "learning-rate-schedules",
  ],
  ["h2-cs-error-parts", "alice", "paraphrase", "How does the expected squared error break down?", "bias-variance"],
  ["h2-cs-l1-select", "alice", "direct", "How does L1 do feature selection?", "l1-regularization"],
  ["h2-cs-folds", "alice", "paraphrase", "Why does every fold get held out once?", "cross-validation"],
  [
    "h2-cs-ce-logits",
    "alice",
    "formula",
    "What is the gradient of cross-entropy with respect to the logits?",
    "cross-entropy-loss",
  ],
  ["h2-cs-inverted-scale", "alice", "formula", "Why scale the surviving activations by 1/(1-p)?", "dropout"],
  [
    "h2-cs-heads-specialize",
    "alice",
    "paraphrase",
    "How do different attention heads specialize?",
    "multi-head-attention",
  ],
  [
    "h2-cs-source-sentence",
    "alice",
    "paraphrase",
    "How does the decoder look at the source sentence in translation?",
    "encoder-decoder-attention",
    "cross-attention",
  ],
  ["h2-cs-two-tower", "alice", "synonym", "What is a two-tower retriever?", "dense-retrieval", "reranking"],
  [
    "h2-cs-rare-terms",
    "alice",
    "paraphrase",
    "Why can BM25 beat neural retrieval on rare exact terms?",
    "dense-retrieval bm25",
  ],
  ["h2-cs-rag-cite", "alice", "acronym", "Why is RAG able to cite sources?", "retrieval-augmented-generation"],
  [
    "h2-cs-sam-exam-q3",
    "sam",
    "direct",
    "What did question 3 of exam 2 say about cross-encoders?",
    "exam-2-solutions",
    "reranking",
  ],
  ["h2-cs-pca", "alice", "absent", "How does principal component analysis reduce dimensions?", "abstain"],
  ["h2-cs-relu", "alice", "absent", "What is the ReLU activation function?", "abstain"],
  ["h2-cs-distillation", "alice", "absent", "How does knowledge distillation work?", "abstain"],
  ["h2-cs-exam-credit", "alice", "unreleased", "What earned full credit on question 1 of exam 2?", "abstain"],
  ["h2-cs-wrong-btree", "alice", "wrong-course", "What is a B+-tree?", "abstain"],
  ["h2-cs-wrong-resonance", "alice", "wrong-course", "What do my ph110 notes say about resonance?", "abstain"],
  ["h2-cs-poem", "alice", "out-of-scope", "Write me a poem about autumn", "abstain"],
];

const DB201: Row[] = [
  [
    "h2-db-fd-origin",
    "bob",
    "paraphrase",
    "Where do functional dependencies come from: the meaning of the data or one table snapshot?",
    "functional-dependencies",
  ],
  ["h2-db-axioms", "bob", "synonym", "What are reflexivity, augmentation and transitivity?", "attribute-closure"],
  [
    "h2-db-implied",
    "bob",
    "formula",
    "How do I check that A -> C follows from A -> B and B -> C?",
    "attribute-closure",
    "functional-dependencies",
  ],
  ["h2-db-array-cell", "bob", "paraphrase", "Why shouldn't a table cell contain an array?", "first-normal-form"],
  [
    "h2-db-enrollment",
    "bob",
    "formula",
    "What is wrong with Enrollment(student_id, course_id, course_title)?",
    "second-normal-form",
  ],
  ["h2-db-dept", "bob", "formula", "Why does employee_id -> dept_id -> dept_name break 3NF?", "third-normal-form"],
  [
    "h2-db-bcnf-preserve",
    "bob",
    "acronym",
    "Is every BCNF decomposition dependency-preserving?",
    "bcnf",
    "lossless-decomposition third-normal-form",
  ],
  [
    "h2-db-half-done",
    "bob",
    "paraphrase",
    "What happens to a transaction that only half finishes?",
    "acid",
    "crash-recovery",
  ],
  ["h2-db-default-level", "bob", "direct", "What isolation level do many systems use by default?", "isolation-levels"],
  [
    "h2-db-twice",
    "bob",
    "paraphrase",
    "What is it called when a transaction reads a row twice and sees different values?",
    "read-anomalies",
    "isolation-levels",
  ],
  ["h2-db-conflict", "bob", "direct", "When do two operations conflict?", "serializability"],
  ["h2-db-strict", "bob", "acronym", "What locks does strict 2PL hold until commit?", "two-phase-locking"],
  ["h2-db-timestamps", "bob", "paraphrase", "How do transaction timestamps prevent deadlocks?", "deadlocks"],
  [
    "h2-db-sequential",
    "bob",
    "acronym",
    "Why does WAL turn random writes into sequential ones?",
    "write-ahead-logging",
  ],
  ["h2-db-aries-passes", "bob", "acronym", "What are the three passes of ARIES?", "crash-recovery"],
  ["h2-db-checkpoints", "bob", "paraphrase", "Why take checkpoints periodically?", "crash-recovery"],
  ["h2-db-extendible", "bob", "direct", "How do extendible and linear hashing grow the directory?", "hash-indexes"],
  [
    "h2-db-table-scan",
    "bob",
    "paraphrase",
    "Why might the optimizer prefer a table scan over an unclustered index?",
    "clustered-indexes",
  ],
  ["h2-db-fanout", "bob", "direct", "What is the fan-out of a B+-tree?", "b-tree-indexes"],
  ["h2-db-referential", "bob", "absent", "What is referential integrity?", "abstain"],
  ["h2-db-cursor", "bob", "absent", "What is a database cursor?", "abstain"],
  ["h2-db-encryption", "bob", "absent", "How does encryption at rest protect a database?", "abstain"],
  [
    "h2-db-midterm-decompose",
    "bob",
    "unreleased",
    "How should R(A, B, C) be decomposed in midterm problem 1?",
    "abstain",
  ],
  ["h2-db-wrong-cv", "bob", "wrong-course", "What is cross-validation?", "abstain"],
  ["h2-db-pizza", "bob", "out-of-scope", "Can you recommend a good pizza place?", "abstain"],
];

const PH110: Row[] = [
  [
    "h2-ph-car-frame",
    "pia",
    "paraphrase",
    "Why do things in an accelerating car seem to move by themselves?",
    "newtons-first-law",
  ],
  [
    "h2-ph-momentum-rate",
    "pia",
    "formula",
    "Is force equal to the rate of change of momentum?",
    "newtons-second-law",
    "impulse linear-momentum",
  ],
  [
    "h2-ph-earth-back",
    "pia",
    "paraphrase",
    "If the Earth pulls on a book, what pulls back on the Earth?",
    "newtons-third-law",
  ],
  ["h2-ph-max-static", "pia", "formula", "What is the maximum static friction force?", "friction"],
  ["h2-ph-fdcos", "pia", "formula", "What is F d cos(theta)?", "work-energy-theorem"],
  [
    "h2-ph-normal-no-work",
    "pia",
    "paraphrase",
    "Why does the normal force do no work on a level surface?",
    "work-energy-theorem",
  ],
  ["h2-ph-du-dx", "pia", "formula", "What is F = -dU/dx?", "potential-energy"],
  [
    "h2-ph-energy-methods",
    "pia",
    "paraphrase",
    "Why are energy methods often simpler than applying Newton's second law?",
    "conservation-of-energy",
    "newtons-second-law",
  ],
  ["h2-ph-force-velocity", "pia", "formula", "How is instantaneous power related to force and velocity?", "power"],
  [
    "h2-ph-mass-velocity",
    "pia",
    "synonym",
    "What is the quantity mass times velocity called?",
    "linear-momentum",
    "center-of-mass",
  ],
  ["h2-ph-knees", "pia", "paraphrase", "Why should I bend my knees when I land from a jump?", "impulse"],
  ["h2-ph-area", "pia", "formula", "What does the area under a force-time graph mean?", "impulse"],
  [
    "h2-ph-carts-stick",
    "pia",
    "paraphrase",
    "What happens when two carts stick together after they crash?",
    "collisions",
    "linear-momentum",
  ],
  ["h2-ph-weighted", "pia", "synonym", "Where is the mass-weighted average position of a system?", "center-of-mass"],
  ["h2-ph-cosine", "pia", "formula", "What is x(t) = A cos(omega t + phi)?", "simple-harmonic-motion"],
  ["h2-ph-two-pi", "pia", "formula", "What is 2 pi times the square root of L/g?", "pendulum"],
  ["h2-ph-wide-swing", "pia", "paraphrase", "Why does a pendulum swinging widely take longer per swing?", "pendulum"],
  ["h2-ph-underdamped", "pia", "direct", "What is an underdamped system?", "damped-oscillations"],
  ["h2-ph-peak-natural", "pia", "paraphrase", "Why does the amplitude peak near the natural frequency?", "resonance"],
  [
    "h2-ph-sam-ps4-pendulum",
    "sam",
    "direct",
    "What do the problem set 4 solutions say about the 1 m pendulum?",
    "problem-set-4-solutions",
    "pendulum",
  ],
  ["h2-ph-inertia-disk", "pia", "absent", "What is the moment of inertia of a disk?", "abstain"],
  ["h2-ph-terminal", "pia", "absent", "How do I calculate terminal velocity?", "abstain"],
  ["h2-ph-coulomb", "pia", "absent", "What is Coulomb's law?", "abstain"],
  [
    "h2-ph-ps4-energy-lost",
    "pia",
    "unreleased",
    "How much kinetic energy do the carts lose in problem 1 of problem set 4?",
    "abstain",
  ],
  ["h2-ph-wrong-isolation", "pia", "wrong-course", "What is an isolation level?", "abstain"],
  ["h2-ph-cat-name", "pia", "out-of-scope", "What is a good name for a cat?", "abstain"],
];

/** The second held-out set, cs301 then db201 then ph110. */
export const HELD_OUT_2_QUESTIONS: readonly LabelledQuestion[] = [
  ...rows("cs301", CS301),
  ...rows("db201", DB201),
  ...rows("ph110", PH110),
];

/**
 * The second held-out set's figures as first measured, on the search as it
 * stood when the set was committed (commit 1fff20c, before the third round's
 * changes): the "before" of the report. Measured once with
 * `npx tsx eval/retrieval/explain.ts --set=heldout2`.
 */
export const HELD_OUT_2_BEFORE = {
  commit: "1fff20c",
  questions: 72,
  answerable: 53,
  recallAt3: 0.877,
  falseAbstentions: 4,
  falseAnswers: 1,
  /** The one false answer then: a formula question whose one-letter variables were dropped. */
  falseAnswerIds: ["h2-db-implied"],
} as const;
