/**
 * The pending review: one card per action, decided together and sent as one
 * resume value bound by `action_id`. Edits are validated against the tool's
 * schema first. A refused earlier answer (`error` in the interrupt) is shown.
 */
import { useEffect, useState } from "react";
import { argsOf, draftOf, schemaFor } from "../draft";
import type { ApprovalInterrupt, ResumeDecision, ToolInfo } from "../types";
import { validateArguments } from "../validate";
import { capitalized, expiredWords, VIEWER_ZONE } from "../wording";
import { ApprovalCard, type CardState } from "./ApprovalCard";

/** The current time, every second: an approval's deadline passes while the page is open. */
function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

export function ApprovalPanel({
  request,
  tools,
  onDecide,
  owner = "you",
  onAskAgain,
}: {
  request: ApprovalInterrupt;
  tools: ToolInfo[];
  onDecide: (decisions: ResumeDecision[]) => void;
  /** Who must ask again once it expired ("you" on the owner's own page). */
  owner?: string;
  /** The owner's way out of an expired review: the same request in a new conversation. */
  onAskAgain?: () => void;
}) {
  const now = useNow();
  const actions = request.action_requests.map((action, index) => {
    const tool = tools.find((item) => item.name === action.name);
    return {
      ...action,
      tool,
      schema: schemaFor(tool?.schema, action.args),
      binding: request.approvals[index],
      allowed: request.review_configs[index]?.allowed_decisions ?? ["approve", "reject"],
    };
  });
  const blank = (action: (typeof actions)[number]): CardState => ({
    choice: undefined,
    draft: draftOf(action.schema, action.args),
    message: "",
    errors: [],
  });
  const [states, setStates] = useState<CardState[]>(() => actions.map(blank));
  const [notice, setNotice] = useState<string | null>(null);
  const deadlines = request.approvals.map((item) => Date.parse(item.expires_at)).filter((at) => !Number.isNaN(at));
  const deadline = deadlines.length > 0 ? Math.min(...deadlines) : Number.NaN;
  // An expired review cannot be decided (the server refuses it as review_expired): no choice is offered.
  const expired = !Number.isNaN(deadline) && deadline <= now;
  const update = (index: number, state: CardState) =>
    setStates((all) => all.map((item, at) => (at === index ? state : item)));

  const send = () => {
    const decisions: ResumeDecision[] = [];
    let invalid = false;
    const checked = actions.map((action, index) => {
      const state = states[index] ?? blank(action);
      const actionId = action.binding?.action_id ?? "";
      if (state.choice === "edit") {
        const { args, errors } = argsOf(action.schema, state.draft);
        const all = [...errors, ...validateArguments(action.schema, args)];
        if (all.length > 0) invalid = true;
        else decisions.push({ type: "edit", action_id: actionId, edited_action: { name: action.name, args } });
        return { ...state, errors: all };
      }
      if (state.choice === "approve") decisions.push({ type: "approve", action_id: actionId });
      if (state.choice === "reject")
        decisions.push({
          type: "reject",
          action_id: actionId,
          ...(state.message.trim() ? { message: state.message.trim() } : {}),
        });
      return state;
    });
    setStates(checked);
    if (checked.some((state) => state.choice === undefined)) return setNotice("Choose a decision for every action.");
    if (invalid) return setNotice("Fix the highlighted fields first.");
    setNotice(null);
    onDecide(decisions);
  };

  return (
    <section className="approvals" aria-labelledby="approvals-title">
      <h2 id="approvals-title">Review needed: {actions.length === 1 ? "1 action" : `${actions.length} actions`}</h2>
      {request.error && (
        <div className="problem problem-refused" role="alert" data-code={request.error.code}>
          <p>
            <strong>Your last answer was refused:</strong> {request.error.message}
          </p>
        </div>
      )}
      {actions.map((action, index) => (
        <ApprovalCard
          key={action.binding?.action_id ?? index}
          index={index}
          actionId={action.binding?.action_id ?? ""}
          name={action.name}
          args={action.args}
          description={action.description}
          expiresAt={action.binding?.expires_at ?? ""}
          allowed={action.allowed}
          tool={action.tool}
          schema={action.schema}
          state={states[index] ?? blank(action)}
          onChange={(state) => update(index, state)}
          expired={expired}
        />
      ))}
      {expired && (
        <p className="problem problem-refused" role="alert" data-testid="review-expired">
          {capitalized(expiredWords(new Date(deadline).toISOString(), owner, VIEWER_ZONE))}.
        </p>
      )}
      {expired && onAskAgain && (
        <div className="row">
          <button type="button" onClick={onAskAgain}>
            Ask again in a new conversation
          </button>
        </div>
      )}
      {notice && (
        <p className="field-error" role="alert">
          {notice}
        </p>
      )}
      {!expired && (
        <div className="row">
          <button
            type="button"
            className="secondary"
            onClick={() => setStates((all) => all.map((state) => ({ ...state, choice: "approve", errors: [] })))}
          >
            Approve all
          </button>
          <button type="button" onClick={send}>
            Send decisions
          </button>
        </div>
      )}
    </section>
  );
}
