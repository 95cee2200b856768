/**
 * Two grouped bar charts as hand-written SVG (no chart dependency): per
 * category, one bar per configuration, for the success rate and for the
 * cost per successful task. Simulated configurations are hatched and named
 * "(simulated)" in the legend.
 */
import type { ConfigurationSummary } from "./aggregate.js";
import type { Category } from "./task.js";

export interface ChartSeries {
  configuration: string;
  simulated: boolean;
}

const COLORS = [
  "#1f77b4",
  "#ff7f0e",
  "#2ca02c",
  "#d62728",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#7f7f7f",
  "#bcbd22",
  "#17becf",
];
/** The diagonal white stripes laid over the bars and legend swatches of simulated configurations (`url(#hatch)`). */
const HATCH = [
  `<defs><pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">`,
  `<line x1="0" y1="0" x2="0" y2="5" stroke="#fff" stroke-width="2"/>`,
  "</pattern></defs>",
].join("");
const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export interface BarChart {
  title: string;
  groups: readonly string[];
  series: readonly ChartSeries[];
  /** value[series][group]; null draws "n/a". */
  values: ReadonlyArray<ReadonlyArray<number | null>>;
  format: (value: number) => string;
  axisMax: number;
}

export function barChart(chart: BarChart): string {
  const left = 60;
  const top = 40;
  const plotHeight = 220;
  const barWidth = 16;
  const groupGap = 24;
  const groupWidth = chart.series.length * barWidth + groupGap;
  const plotWidth = Math.max(chart.groups.length * groupWidth, 200);
  const legendTop = top + plotHeight + 40;
  const height = legendTop + chart.series.length * 18 + 10;
  const width = left + plotWidth + 20;
  const y = (value: number) => top + plotHeight - (chart.axisMax === 0 ? 0 : (value / chart.axisMax) * plotHeight);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="sans-serif" font-size="11">`,
    HATCH,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">${escapeXml(chart.title)}</text>`,
  ];
  for (let tick = 0; tick <= 4; tick += 1) {
    const value = (chart.axisMax * tick) / 4;
    parts.push(
      `<line x1="${left}" x2="${left + plotWidth}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${y(value) + 4}" text-anchor="end">${escapeXml(chart.format(value))}</text>`,
    );
  }
  chart.groups.forEach((group, groupIndex) => {
    const x0 = left + groupIndex * groupWidth + groupGap / 2;
    chart.series.forEach((series, seriesIndex) => {
      const value = chart.values[seriesIndex]?.[groupIndex] ?? null;
      const x = x0 + seriesIndex * barWidth;
      const color = COLORS[seriesIndex % COLORS.length] ?? "#000";
      if (value === null) {
        const middle = x + barWidth / 2;
        parts.push(
          `<text x="${middle}" y="${y(0) - 4}" text-anchor="middle" font-size="8" transform="rotate(-90 ${middle} ${y(0) - 4})">n/a</text>`,
        );
        return;
      }
      const barTop = y(value);
      const barHeight = Math.max(y(0) - barTop, 0);
      const tooltip = escapeXml(`${series.configuration} · ${group}: ${chart.format(value)}`);
      parts.push(
        `<rect x="${x}" y="${barTop}" width="${barWidth - 2}" height="${barHeight}" fill="${color}"><title>${tooltip}</title></rect>`,
      );
      if (series.simulated)
        parts.push(`<rect x="${x}" y="${barTop}" width="${barWidth - 2}" height="${barHeight}" fill="url(#hatch)"/>`);
    });
    parts.push(
      `<text x="${x0 + (chart.series.length * barWidth) / 2}" y="${top + plotHeight + 16}" text-anchor="middle">${escapeXml(group)}</text>`,
    );
  });
  parts.push(`<line x1="${left}" x2="${left + plotWidth}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`);
  chart.series.forEach((series, index) => {
    const yLegend = legendTop + index * 18;
    parts.push(
      `<rect x="${left}" y="${yLegend}" width="12" height="12" fill="${COLORS[index % COLORS.length] ?? "#000"}"/>`,
      ...(series.simulated ? [`<rect x="${left}" y="${yLegend}" width="12" height="12" fill="url(#hatch)"/>`] : []),
      `<text x="${left + 18}" y="${yLegend + 10}">${escapeXml(series.configuration + (series.simulated ? " (simulated)" : ""))}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

function groupsOf(summaries: readonly ConfigurationSummary[], categories: readonly Category[]): string[] {
  return [...categories.filter((category) => summaries.some((summary) => summary.by_category[category])), "overall"];
}

function cell(summary: ConfigurationSummary, group: string) {
  return group === "overall" ? summary.overall : summary.by_category[group as Category];
}

/** Success rate (mean over repeats) per category and overall. */
export function successChart(
  summaries: readonly ConfigurationSummary[],
  series: readonly ChartSeries[],
  categories: readonly Category[],
): string {
  const groups = groupsOf(summaries, categories);
  const values = summaries.map((summary) => groups.map((group) => cell(summary, group)?.success.mean ?? null));
  return barChart({
    title: "Success rate by category (mean over repeats)",
    groups,
    series,
    values,
    format: (value) => `${Math.round(value * 100)}%`,
    axisMax: 1,
  });
}

/** Cost per successful task (USD) per category and overall; "n/a" where nothing succeeded. */
export function costChart(
  summaries: readonly ConfigurationSummary[],
  series: readonly ChartSeries[],
  categories: readonly Category[],
): string {
  const groups = groupsOf(summaries, categories);
  const values = summaries.map((summary) => groups.map((group) => cell(summary, group)?.cost_per_success_usd ?? null));
  const highest = Math.max(0, ...values.flat().filter((value): value is number => value !== null));
  return barChart({
    title: "Cost per successful task, USD (all runs' cost ÷ successes)",
    groups,
    series,
    values,
    format: (value) => `$${value.toFixed(5)}`,
    axisMax: highest === 0 ? 0.0001 : highest * 1.1,
  });
}
