/** A final answer: its text with each `[n]` a button, and the numbered sources; a citation opens its excerpt. */
import { Fragment, useState } from "react";
import type { Citation, Evidence, RunResult } from "../types";
import { Excerpt } from "./Excerpt";
import { timesInWords, VIEWER_ZONE } from "../wording";

export function Answer({ result, evidence }: { result: RunResult; evidence: Evidence[] }) {
  const [open, setOpen] = useState<number | null>(null);
  const citation = (n: number): Citation | undefined => result.citations[n - 1];
  // Instants in the answer are said in the viewer's time (the CLI and the API keep them as written).
  const pieces = timesInWords(result.answer, VIEWER_ZONE).split(/(\[\d+\])/);
  const opened = open !== null ? citation(open) : undefined;
  return (
    <div className={result.abstained ? "answer abstained" : "answer"} data-testid="answer">
      <p>
        {pieces.map((piece, index) => {
          const n = /^\[(\d+)\]$/.exec(piece)?.[1];
          if (n && citation(Number(n))) {
            return (
              <button
                // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one fixed answer text; they never reorder.
                key={index}
                type="button"
                className="cite"
                aria-label={`Citation ${n}: open the excerpt`}
                onClick={() => setOpen(Number(n))}
              >
                [{n}]
              </button>
            );
          }
          // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one fixed answer text; they never reorder.
          return <Fragment key={index}>{piece}</Fragment>;
        })}
      </p>
      {result.citations.length > 0 && (
        <ol className="sources" aria-label="Sources">
          {result.citations.map((item, index) => (
            <li key={item.ref}>
              <button type="button" className="link" onClick={() => setOpen(index + 1)}>
                [{index + 1}] {item.title ?? item.source_id}
                {item.page !== undefined ? `, p. ${item.page}` : ""}
              </button>
            </li>
          ))}
        </ol>
      )}
      {opened && open !== null && (
        <Excerpt
          number={open}
          citation={opened}
          evidence={evidence.find((item) => item.ref === opened.ref)}
          onClose={() => setOpen(null)}
        />
      )}
    </div>
  );
}
