/**
 * The README's chart: input tokens of each model request over the research
 * thread, one line per variant, as a small self-contained SVG (no library:
 * three polylines and two axes).
 */
import fs from "node:fs/promises";
import type { ScenarioFigures } from "./prompt-cache-scenarios.js";
import type { PerVariant } from "./report.js";
import { VARIANTS } from "./variants.js";

const WIDTH = 640;
const HEIGHT = 320;
const MARGIN = { left: 60, right: 150, top: 20, bottom: 40 };
const COLORS: Record<string, string> = { warrant: "#1f77b4", create_react_agent: "#d62728", create_agent: "#ff7f0e" };
const LABELS: Record<string, string> = {
  warrant: "Warrant",
  create_react_agent: "createReactAgent",
  create_agent: "createAgent",
};

export function inputTokensChart(figures: PerVariant<ScenarioFigures>): string {
  const series = VARIANTS.map((name) => ({ name, values: figures[name].per_request_input_tokens }));
  const most = Math.max(1, ...series.flatMap((entry) => entry.values));
  const top = Math.ceil(most / 1000) * 1000;
  const count = Math.max(2, ...series.map((entry) => entry.values.length));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (index: number) => MARGIN.left + (index / (count - 1)) * plotWidth;
  const y = (value: number) => MARGIN.top + plotHeight - (value / top) * plotHeight;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" ` +
      `font-family="sans-serif" font-size="11">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<line x1="${MARGIN.left}" y1="${y(0)}" x2="${MARGIN.left + plotWidth}" y2="${y(0)}" stroke="#444"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${y(0)}" stroke="#444"/>`,
  ];
  for (let tick = 0; tick <= 4; tick += 1) {
    const value = (top / 4) * tick;
    parts.push(
      `<line x1="${MARGIN.left - 4}" y1="${y(value)}" x2="${MARGIN.left + plotWidth}" y2="${y(value)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 8}" y="${y(value) + 4}" text-anchor="end">${Math.round(value).toLocaleString("en-US")}</text>`,
    );
  }
  for (let index = 0; index < count; index += 5)
    parts.push(`<text x="${x(index)}" y="${y(0) + 16}" text-anchor="middle">${index + 1}</text>`);
  const middleY = MARGIN.top + plotHeight / 2;
  parts.push(
    `<text x="${MARGIN.left + plotWidth / 2}" y="${HEIGHT - 6}" text-anchor="middle">model request of the 30-step research thread</text>`,
    `<text x="14" y="${middleY}" text-anchor="middle" transform="rotate(-90 14 ${middleY})">input tokens (o200k)</text>`,
  );
  series.forEach((entry, position) => {
    const points = entry.values.map((value, index) => `${x(index).toFixed(1)},${y(value).toFixed(1)}`).join(" ");
    const color = COLORS[entry.name] ?? "#000";
    /** The legend's column, right of the plot, and the height of this variant's swatch in it. */
    const legendX = WIDTH - MARGIN.right;
    const swatchY = MARGIN.top + 10 + position * 18;
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"/>`,
      `<line x1="${legendX + 12}" y1="${swatchY}" x2="${legendX + 32}" y2="${swatchY}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${WIDTH - MARGIN.right + 36}" y="${MARGIN.top + 14 + position * 18}">${LABELS[entry.name] ?? entry.name}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

export async function writeInputTokensChart(figures: PerVariant<ScenarioFigures>, file: string): Promise<void> {
  await fs.writeFile(file, inputTokensChart(figures));
}
