/** Tool calls in flight, as the `tools` stream mode reports them. */
import type { ToolProgress } from "@langchain/langgraph-sdk";

export function ToolProgressList({ progress }: { progress: ToolProgress[] }) {
  if (progress.length === 0) return null;
  return (
    <ul className="tool-progress" aria-label="Tools in progress" aria-live="polite">
      {progress.map((item, index) => (
        <li key={item.toolCallId ?? index}>
          {item.name}: {item.state}
        </li>
      ))}
    </ul>
  );
}
