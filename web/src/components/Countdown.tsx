/** Time left until an approval request expires, updated every second. */
import { useEffect, useState } from "react";

export function Countdown({ until }: { until: string }) {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = Math.max(0, Math.floor((Date.parse(until) - now) / 1000));
  if (Number.isNaN(left)) return null;
  if (left === 0) return <span className="countdown expired">expired</span>;
  const minutes = Math.floor(left / 60);
  const seconds = String(left % 60).padStart(2, "0");
  return (
    <span className="countdown" title={until}>
      expires in {minutes}:{seconds}
    </span>
  );
}
