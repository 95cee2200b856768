/** Time left until an approval request expires, updated every second; once past, the time it expired. */
import { useEffect, useState } from "react";
import { formatClock, VIEWER_ZONE } from "../wording";

export function Countdown({ until }: { until: string }) {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const deadline = Date.parse(until);
  if (Number.isNaN(deadline)) return null;
  const left = Math.max(0, Math.floor((deadline - now) / 1000));
  if (left === 0) return <span className="countdown expired">expired at {formatClock(deadline, VIEWER_ZONE)}</span>;
  const minutes = Math.floor(left / 60);
  const seconds = String(left % 60).padStart(2, "0");
  return (
    <span className="countdown" title={`until ${formatClock(deadline, VIEWER_ZONE)}`}>
      expires in {minutes}:{seconds}
    </span>
  );
}
