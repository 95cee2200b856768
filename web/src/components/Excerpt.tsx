/** The cited excerpt in a modal dialog: source, page, version and the text the answer rests on. */
import { useEffect, useRef } from "react";
import type { Citation, Evidence } from "../types";

export function Excerpt({
  number,
  citation,
  evidence,
  onClose,
}: {
  number: number;
  citation: Citation;
  evidence: Evidence | undefined;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);
  return (
    <dialog ref={dialog} className="excerpt" aria-labelledby="excerpt-title" onClose={onClose}>
      <h3 id="excerpt-title">
        [{number}] {evidence?.title ?? citation.title ?? citation.source_id}
      </h3>
      <dl>
        <dt>Source</dt>
        <dd data-testid="excerpt-source">{citation.source_id}</dd>
        {(evidence?.page ?? citation.page) !== undefined && (
          <>
            <dt>Page</dt>
            <dd data-testid="excerpt-page">{evidence?.page ?? citation.page}</dd>
          </>
        )}
        <dt>Version</dt>
        <dd data-testid="excerpt-version">{evidence?.version ?? "unknown"}</dd>
        <dt>Reference</dt>
        <dd>
          <code>{citation.ref}</code>
        </dd>
      </dl>
      <blockquote data-testid="excerpt-text">
        {evidence?.excerpt ?? "The excerpt is not in this thread's evidence."}
      </blockquote>
      <form method="dialog">
        {/* biome-ignore lint/a11y/noAutofocus: a modal dialog moves focus to its close button (WAI-ARIA dialog pattern). */}
        <button type="submit" autoFocus>
          Close
        </button>
      </form>
    </dialog>
  );
}
