/**
 * The signed-in page: thread list, the open thread's conversation (streamed
 * through `useStream`), the run's details, approval cards for a pending
 * review, and the composer. The thread id lives in the URL.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { StreamMode } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { makeClient, problemOf, type Problem } from "../api";
import { approvalOf, authorizationsOf, taskWaitsOf } from "../read";
import { setThreadInUrl, threadFromUrl } from "../session";
import { useAuthorizationReturn } from "../use-authorization-return";
import { useRejoin } from "../use-rejoin";
import type { AgentValues, ResumeDecision, SessionInfo } from "../types";
import { ApprovalPanel } from "./ApprovalPanel";
import { AssistantQuestion, questionOf } from "./AssistantQuestion";
import { ElicitationForm } from "./ElicitationForm";
import { UrlConsentCard } from "./UrlConsentCard";
import { useElicitations } from "../use-elicitations";
import { Composer } from "./Composer";
import { ConnectCard } from "./ConnectCard";
import { Header } from "./Header";
import { MessageList } from "./MessageList";
import { ProblemBanner } from "./ProblemBanner";
import { Reviews } from "./Reviews";
import { RunPanel } from "./RunPanel";
import { ThreadList } from "./ThreadList";
import { capitalized, expiredWords, VIEWER_ZONE } from "../wording";
import { ToolProgressList } from "./ToolProgressList";

/**
 * How every run is streamed. A run outlives its page: closing or reloading the tab must not
 * cancel it (the SDK's default for a stream that is not resumable); Stop cancels explicitly.
 */
const SUBMIT_OPTIONS = {
  streamMode: ["values", "messages-tuple", "updates", "tools", "custom"] as StreamMode[],
  streamResumable: true,
  onDisconnect: "continue" as const,
};

export function Chat({
  token,
  session,
  onSignOut,
}: {
  token: string;
  session: SessionInfo;
  onSignOut: (reason: Problem | null) => void;
}) {
  const client = useMemo(() => makeClient(token), [token]);
  const [threadId, setThreadId] = useState<string | null>(threadFromUrl);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [threadsChanged, setThreadsChanged] = useState(0);
  const [view, setView] = useState<"chat" | "reviews">("chat");
  const [reopening, setReopening] = useState<string | null>(null);
  // A request to ask again (its review expired): the composer of the new conversation starts with it.
  const [askAgain, setAskAgain] = useState<{ text: string; at: number } | null>(null);
  // What to do again when the server did not answer: the last message or decisions sent.
  const lastAction = useRef<(() => void) | null>(null);

  const report = useCallback(
    (error: unknown) => {
      const found = problemOf(error);
      if (found.kind === "auth")
        onSignOut({ ...found, message: `Your sign-in is no longer valid (${found.message}).` });
      else setProblem(found);
    },
    [onSignOut],
  );

  const elicitations = useElicitations(token, threadId);
  const stream = useStream<AgentValues>({
    client,
    assistantId: "agent",
    threadId,
    fetchStateHistory: false,
    onThreadId: (id) => {
      setThreadId(id);
      setThreadInUrl(id);
      setThreadsChanged((n) => n + 1);
    },
    onError: report,
    onFinish: () => setThreadsChanged((n) => n + 1),
    // A server's question during a call (elicitation) arrives as a custom event.
    onCustomEvent: (data) => elicitations.onCustomEvent(data),
  });

  useRejoin(client, threadId, stream, SUBMIT_OPTIONS.streamMode);
  // Waiting for the owner to connect a server: the callback resumes the run elsewhere; this page follows it.
  const authorizations = authorizationsOf(stream.interrupt?.value);
  // Waiting for a write's MCP task: the server resumes the thread when it ends; this page follows it.
  const taskWaits = taskWaitsOf(stream.interrupt?.value);
  useAuthorizationReturn({
    client,
    threadId,
    waiting: (authorizations.length > 0 || taskWaits.length > 0) && !stream.isLoading,
    stream,
    streamMode: SUBMIT_OPTIONS.streamMode,
    reopen: () => {
      setReopening(threadId);
      setThreadId(null);
    },
  });
  // Reopening a thread: closed in one render, opened again in the next, so its state is read afresh.
  useEffect(() => {
    if (reopening === null || threadId !== null) return;
    setThreadId(reopening);
    setReopening(null);
  }, [reopening, threadId]);

  useEffect(() => {
    if (stream.error) report(stream.error);
  }, [stream.error, report]);

  const retry = () => {
    setProblem(null);
    setThreadsChanged((n) => n + 1);
    const again = lastAction.current;
    lastAction.current = null;
    again?.();
  };
  const openThread = (id: string | null) => {
    lastAction.current = null;
    setProblem(null);
    setView("chat");
    setThreadId(id);
    setThreadInUrl(id);
  };
  const send = (text: string) => {
    setProblem(null);
    setAskAgain(null);
    lastAction.current = () => send(text);
    void stream.submit({ messages: [{ type: "human", content: text }] }, SUBMIT_OPTIONS);
  };
  const decide = (decisions: ResumeDecision[]) => {
    setProblem(null);
    lastAction.current = () => decide(decisions);
    void stream.submit(undefined, { ...SUBMIT_OPTIONS, command: { resume: { decisions } } });
  };

  const values = stream.values ?? {};
  const approval = approvalOf(stream.interrupt?.value);
  const question = stream.isLoading ? null : questionOf(values);
  // The server refused the decision as expired (nothing was sent): say when, in the viewer's time.
  const deadline = approval ? Math.min(...approval.approvals.map((item) => Date.parse(item.expires_at))) : Number.NaN;
  const shownProblem =
    problem?.code === "review_expired" && !Number.isNaN(deadline)
      ? { ...problem, message: `${capitalized(expiredWords(new Date(deadline).toISOString(), "you", VIEWER_ZONE))}.` }
      : problem;
  return (
    <div className="layout">
      <Header session={session} view={view} token={token} onView={setView} onSignOut={() => onSignOut(null)} />
      <ThreadList client={client} current={threadId} changed={threadsChanged} onOpen={openThread} onProblem={report} />
      <main className="conversation" aria-label="Conversation">
        {view === "reviews" ? (
          <Reviews token={token} session={session} />
        ) : (
          <>
            <MessageList messages={stream.messages} values={values} />
            {stream.isLoading && <ToolProgressList progress={stream.toolProgress} />}
            {elicitations.questions.map((question) =>
              question.mode === "url" ? (
                <UrlConsentCard
                  key={question.elicitation_id}
                  question={question}
                  onAnswer={(answer) => elicitations.answer(question, answer)}
                />
              ) : (
                <ElicitationForm
                  key={question.elicitation_id}
                  question={question}
                  onAnswer={(answer) => elicitations.answer(question, answer)}
                />
              ),
            )}
            {stream.isLoading && (
              <p role="status" className="working">
                Working…
              </p>
            )}
            {!stream.isLoading &&
              taskWaits.map((task) => (
                <p key={task.task_id} role="status" className="working">
                  Waiting for {task.tool} at {task.server} (task {task.task_id}); the run goes on when it ends.
                </p>
              ))}
            {values.run && (
              <RunPanel values={values} budgets={session.budgets} live={stream.isLoading} asked={question !== null} />
            )}
            {/* The question is the last thing said before the input that answers it. */}
            {question && <AssistantQuestion question={question} />}
            {!stream.isLoading &&
              authorizations.map((request) => <ConnectCard key={request.server} request={request} />)}
            {approval && !stream.isLoading && (
              <ApprovalPanel
                key={
                  approval.approvals.map((item) => `${item.action_id}:${item.version}`).join(",") +
                  (approval.error?.message ?? "")
                }
                request={approval}
                tools={session.tools}
                onDecide={decide}
                onAskAgain={() => {
                  const text = values.run?.request ?? "";
                  openThread(null);
                  setAskAgain({ text, at: Date.now() });
                }}
              />
            )}
            {shownProblem && (
              <ProblemBanner
                problem={shownProblem}
                onDismiss={() => setProblem(null)}
                {...(shownProblem.kind === "down" ? { onRetry: retry } : {})}
              />
            )}
            <Composer
              key={askAgain ? `again-${askAgain.at}` : "composer"}
              initialText={askAgain?.text ?? ""}
              disabled={stream.isLoading || approval !== null || authorizations.length > 0 || taskWaits.length > 0}
              pendingReview={approval !== null}
              question={question !== null}
              onSend={send}
              onStop={stream.isLoading ? () => void stream.stop() : undefined}
            />
          </>
        )}
      </main>
    </div>
  );
}
