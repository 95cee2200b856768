/**
 * One action waiting for review, in words: what will happen, where and how
 * risky, its arguments as a readable table, the expiry countdown, the ids
 * behind "details", and the reviewer's choice (approve, edit the arguments
 * with a diff of the change, or reject with a message). An expired action
 * offers no choice.
 */
import { argsOf, type Draft } from "../draft";
import type { JsonSchema, ToolInfo } from "../types";
import type { FieldError } from "../validate";
import { ArgumentsForm } from "./ArgumentsForm";
import { Countdown } from "./Countdown";
import { describeAction, diffArguments, riskWords, toolWords, VIEWER_ZONE } from "../wording";

export type Choice = "approve" | "edit" | "reject";

export interface CardState {
  choice: Choice | undefined;
  draft: Draft;
  message: string;
  errors: FieldError[];
}

interface Props {
  index: number;
  actionId: string;
  name: string;
  args: Record<string, unknown>;
  description: string | undefined;
  expiresAt: string;
  allowed: string[];
  tool: ToolInfo | undefined;
  schema: JsonSchema;
  state: CardState;
  onChange: (state: CardState) => void;
  expired: boolean;
}

const LABELS: Record<Choice, string> = { approve: "Approve", edit: "Edit", reject: "Reject" };

export function ApprovalCard({
  index,
  actionId,
  name,
  args,
  description,
  expiresAt,
  allowed,
  tool,
  schema,
  state,
  onChange,
  expired,
}: Props) {
  const id = `action-${index}`;
  const words = describeAction(name, args, VIEWER_ZONE);
  const server = tool ? `the ${toolWords(tool.server).toLowerCase()} server` : "an unknown server";
  const edited = state.choice === "edit" ? argsOf(schema, state.draft) : undefined;
  const changes = edited && edited.errors.length === 0 ? diffArguments(args, edited.args, VIEWER_ZONE) : [];
  return (
    <article
      className={expired ? "approval-card expired" : "approval-card"}
      aria-labelledby={`${id}-title`}
      data-action-id={actionId}
      data-tool={name}
      data-choice={state.choice ?? ""}
    >
      <header>
        <h3 id={`${id}-title`}>
          {index + 1}. {words.summary}
        </h3>
        <Countdown until={expiresAt} />
      </header>
      <p className="destination">
        <span className={`risk risk-${tool?.risk === "read" ? "low" : "high"}`}>This {riskWords(tool?.risk)}</span> on{" "}
        {server}.
      </p>
      {words.rest.length > 0 && (
        <dl className="args">
          {words.rest.map((field) => (
            <div key={field.label}>
              <dt>{field.label}</dt>
              <dd>{field.value}</dd>
            </div>
          ))}
        </dl>
      )}
      <details className="details">
        <summary>Details</summary>
        <dl className="args">
          {/* Every argument, including those the sentence above already says. */}
          {words.fields
            .filter((field) => !words.rest.includes(field))
            .map((field) => (
              <div key={field.label}>
                <dt>{field.label}</dt>
                <dd>{field.value}</dd>
              </div>
            ))}
          <div>
            <dt>Tool</dt>
            <dd>
              <code>{name}</code>
            </dd>
          </div>
          {description && (
            <div>
              <dt>Request</dt>
              <dd>{description}</dd>
            </div>
          )}
          <div>
            <dt>Action id</dt>
            <dd>
              <code>{actionId}</code>
            </dd>
          </div>
        </dl>
      </details>
      {!expired && (
        <fieldset>
          <legend>Decision for action {index + 1}</legend>
          <div className="row">
            {(["approve", "edit", "reject"] as const)
              .filter((choice) => allowed.includes(choice))
              .map((choice) => (
                <label key={choice} className="choice">
                  <input
                    type="radio"
                    name={`${id}-choice`}
                    value={choice}
                    checked={state.choice === choice}
                    onChange={() => onChange({ ...state, choice, errors: [] })}
                  />
                  {LABELS[choice]}
                </label>
              ))}
          </div>
        </fieldset>
      )}
      {state.choice === "edit" && !expired && (
        <>
          <ArgumentsForm
            idPrefix={id}
            schema={schema}
            draft={state.draft}
            errors={state.errors}
            onChange={(draft) => onChange({ ...state, draft, errors: [] })}
          />
          <div className="diff" aria-live="polite">
            <h4>Your change</h4>
            {changes.length === 0 ? (
              <p className="muted">Nothing changed yet.</p>
            ) : (
              <ul>
                {changes.map((change) => (
                  <li key={change.label}>
                    <strong>{change.label}</strong>: <del>{change.before}</del> → <ins>{change.after}</ins>
                  </li>
                ))}
              </ul>
            )}
          </div>
        </>
      )}
      {state.choice === "reject" && !expired && (
        <div className="field">
          <label htmlFor={`${id}-message`}>Why (shown to the agent)</label>
          <input
            id={`${id}-message`}
            type="text"
            maxLength={2000}
            value={state.message}
            onChange={(event) => onChange({ ...state, message: event.target.value })}
          />
        </div>
      )}
    </article>
  );
}
