/** Number formats of the bench's printed tables (markdown, pasted into the README). */

export const decimals = (value: number, digits: number) =>
  value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const times = (value: number | null) => (value === null ? "–" : `${decimals(value, 2)}×`);
export const verdict = (met: boolean | null) => (met === null ? "–" : met ? "met" : "**not met**");
export const percent = (part: number, whole: number, digits = 0) =>
  whole > 0 ? `${decimals((100 * part) / whole, digits)}%` : "–";
