/**
 * The held-out set (issue 27, second round): written and committed before
 * the coverage rule was built and before any cut-off was tuned again, and
 * never tuned on. New phrasings of the same kinds over the same notes, none
 * copied from questions.ts or fresh.ts. Its figures are reported apart from
 * the labelled (calibration) set, as the estimate for questions the tuning
 * did not see. Labelled from the notes' text. Data only.
 *
 * Seen: merged into the calibration set (calibration.ts) on 2 December 2026
 * (issue 27, third round), after its misses had been read and fixed; the
 * untuned set is now heldout2.ts.
 */
import { type LabelledQuestion, type Row, rows } from "./questions.js";

const CS301: Row[] = [
  [
    "h-cs-descent-direction",
    "alice",
    "paraphrase",
    "Which way does gradient descent move the weights?",
    "gradient-descent",
  ],
  [
    "h-cs-noisy-updates",
    "alice",
    "paraphrase",
    "Why are the updates of stochastic gradient descent noisy?",
    "stochastic-gradient-descent",
  ],
  ["h-cs-cosine-decay", "alice", "direct", "What is cosine decay of the learning rate?", "learning-rate-schedules"],
  ["h-cs-ridge", "alice", "synonym", "What is ridge regression?", "l2-regularization"],
  ["h-cs-sparse-weights", "alice", "paraphrase", "How do I get a model with sparse weights?", "l1-regularization"],
  ["h-cs-thinned", "alice", "paraphrase", "Why does dropout act like an ensemble?", "dropout"],
  ["h-cs-nll", "alice", "synonym", "What is negative log-likelihood loss?", "cross-entropy-loss"],
  ["h-cs-exploding", "alice", "direct", "What causes exploding gradients?", "backpropagation"],
  [
    "h-cs-contextual",
    "alice",
    "paraphrase",
    "How are contextual embeddings different from word2vec?",
    "word-embeddings",
  ],
  [
    "h-cs-qkv-source",
    "alice",
    "paraphrase",
    "Where do the queries, keys and values come from in self-attention?",
    "self-attention",
    "cross-attention scaled-dot-product-attention",
  ],
  [
    "h-cs-minus-infinity",
    "alice",
    "formula",
    "Why set the attention scores of future positions to minus infinity?",
    "causal-masking",
    "scaled-dot-product-attention",
  ],
  ["h-cs-hnsw", "alice", "acronym", "What is HNSW?", "approximate-nearest-neighbor"],
  ["h-cs-mrr", "alice", "direct", "How is mean reciprocal rank computed?", "retrieval-evaluation"],
  ["h-cs-bi-cross", "alice", "paraphrase", "Compare a bi-encoder with a cross-encoder", "reranking", "dense-retrieval"],
  [
    "h-cs-generator-guesses",
    "alice",
    "paraphrase",
    "Why does the generator guess when the right passage is not retrieved?",
    "retrieval-augmented-generation",
  ],
  ["h-cs-clipping", "alice", "absent", "What is gradient clipping?", "abstain"],
  ["h-cs-random-forest", "alice", "absent", "How does a random forest work?", "abstain"],
  ["h-cs-vae", "alice", "absent", "What is a variational autoencoder?", "abstain"],
  ["h-cs-exam2-grading", "alice", "unreleased", "How was question 2 of exam 2 marked?", "abstain"],
  ["h-cs-wrong-third-law", "alice", "wrong-course", "What does Newton's third law say?", "abstain"],
  ["h-cs-wrong-wal", "alice", "wrong-course", "What do my db201 notes say about write-ahead logging?", "abstain"],
  ["h-cs-world-cup", "alice", "out-of-scope", "Who won the football world cup in 2018?", "abstain"],
];

const DB201: Row[] = [
  ["h-db-fd", "bob", "direct", "What is a functional dependency?", "functional-dependencies"],
  ["h-db-x-plus", "bob", "formula", "How is X+ computed?", "attribute-closure"],
  ["h-db-atomic", "bob", "paraphrase", "Why must every column hold a single atomic value?", "first-normal-form"],
  ["h-db-2nf", "bob", "acronym", "What does 2NF forbid?", "second-normal-form"],
  ["h-db-prime", "bob", "direct", "What is a prime attribute?", "third-normal-form", "second-normal-form bcnf"],
  [
    "h-db-stop-at-3nf",
    "bob",
    "paraphrase",
    "Why do designers sometimes stop at 3NF instead of going to BCNF?",
    "bcnf",
    "third-normal-form",
  ],
  [
    "h-db-spurious",
    "bob",
    "paraphrase",
    "Why can splitting a table produce spurious tuples when joined back?",
    "lossless-decomposition",
  ],
  [
    "h-db-survive-crash",
    "bob",
    "paraphrase",
    "What makes committed changes survive a crash?",
    "acid",
    "write-ahead-logging crash-recovery",
  ],
  ["h-db-read-committed", "bob", "direct", "What does read committed prevent?", "isolation-levels", "read-anomalies"],
  ["h-db-cycle", "bob", "paraphrase", "Why does a cycle in the precedence graph matter?", "serializability"],
  ["h-db-phases", "bob", "direct", "What are the growing and shrinking phases?", "two-phase-locking"],
  ["h-db-victim", "bob", "paraphrase", "Which transaction gets aborted to break a deadlock?", "deadlocks"],
  ["h-db-vacuum", "bob", "direct", "Why does MVCC need a vacuum process?", "mvcc"],
  ["h-db-lsn", "bob", "acronym", "What is the LSN stored on each page used for?", "crash-recovery"],
  [
    "h-db-range-scan",
    "bob",
    "paraphrase",
    "Which kind of index is good for range scans?",
    "b-tree-indexes clustered-indexes",
    "hash-indexes",
  ],
  [
    "h-db-index-only",
    "bob",
    "paraphrase",
    "Can a query be answered from the index alone without visiting the table?",
    "composite-indexes",
  ],
  ["h-db-trigger", "bob", "absent", "What is a database trigger?", "abstain"],
  ["h-db-bloom", "bob", "absent", "How does a bloom filter work?", "abstain"],
  ["h-db-eventual", "bob", "absent", "What is eventual consistency?", "abstain"],
  ["h-db-midterm-p3", "bob", "unreleased", "What is the answer to problem 3 of the midterm?", "abstain"],
  ["h-db-wrong-backprop", "bob", "wrong-course", "What is backpropagation?", "abstain"],
  ["h-db-tokyo", "bob", "out-of-scope", "What time is it in Tokyo?", "abstain"],
];

const PH110: Row[] = [
  [
    "h-ph-no-net-force",
    "pia",
    "paraphrase",
    "What happens to a moving object when no net force acts on it?",
    "newtons-first-law",
  ],
  ["h-ph-components", "pia", "formula", "Does F = ma hold for each component separately?", "newtons-second-law"],
  ["h-ph-wall", "pia", "paraphrase", "If I push on a wall, does the wall push back on me?", "newtons-third-law"],
  ["h-ph-mu-k", "pia", "formula", "What is mu_k?", "friction"],
  ["h-ph-half-mv2", "pia", "formula", "What is one half m v squared?", "work-energy-theorem"],
  ["h-ph-hooke", "pia", "synonym", "What is Hooke's law?", "potential-energy", "simple-harmonic-motion"],
  ["h-ph-path", "pia", "paraphrase", "Why doesn't the work done by gravity depend on the path?", "potential-energy"],
  ["h-ph-k-plus-u", "pia", "formula", "When does K + U stay constant?", "conservation-of-energy"],
  ["h-ph-watt", "pia", "formula", "How many joules per second is one watt?", "power"],
  ["h-ph-crumple", "pia", "paraphrase", "Why do cars have crumple zones?", "impulse"],
  ["h-ph-stick", "pia", "synonym", "What is a perfectly inelastic collision?", "collisions"],
  [
    "h-ph-cm-free",
    "pia",
    "paraphrase",
    "How does the center of mass move when no external force acts?",
    "center-of-mass",
    "linear-momentum",
  ],
  ["h-ph-length", "pia", "paraphrase", "How does the length of a pendulum change its period?", "pendulum"],
  ["h-ph-overdamped", "pia", "direct", "What is an overdamped oscillator?", "damped-oscillations"],
  ["h-ph-peak", "pia", "paraphrase", "Why does lighter damping make the resonance peak taller?", "resonance"],
  ["h-ph-sam-impulse", "sam", "direct", "What do my ph110 notes say about impulse?", "impulse"],
  ["h-ph-bernoulli", "pia", "absent", "What is Bernoulli's principle?", "abstain"],
  ["h-ph-gravitation", "pia", "absent", "What is the law of universal gravitation?", "abstain"],
  ["h-ph-doppler", "pia", "absent", "What is the Doppler effect?", "abstain"],
  ["h-ph-ps4-period", "pia", "unreleased", "What is the period in problem 2 of problem set 4?", "abstain"],
  ["h-ph-wrong-momentum", "pia", "wrong-course", "What do my cs301 notes say about momentum?", "abstain"],
  ["h-ph-translate", "pia", "out-of-scope", "Translate 'good morning' into Spanish", "abstain"],
];

/**
 * The held-out set's figures as first measured, on the search as it stood
 * when the set was committed (before the phrase and compound rules of
 * tools/notes/phrases.ts and expansion.ts): the "before" of the report.
 */
export const HELD_OUT_BEFORE = {
  commit: "a62966f",
  recallAt3: "75.5%",
  falseAbstention: "17.0% (8 of 47)",
  falseAnswer: "3.0% (2 of 66)",
} as const;

/** The held-out set, cs301 then db201 then ph110. */
export const HELD_OUT_QUESTIONS: readonly LabelledQuestion[] = [
  ...rows("cs301", CS301),
  ...rows("db201", DB201),
  ...rows("ph110", PH110),
];
