/**
 * A horizontal bar chart as a standalone SVG (no dependencies): one bar per
 * row, the value printed at its end, an optional dashed target line.
 */
export interface Bar {
  readonly label: string;
  readonly value: number;
  /** Bars of the same group share a colour (e.g. a baseline against the system). */
  readonly group?: string;
}

export interface ChartOptions {
  readonly title: string;
  readonly unit: string;
  /** A vertical dashed line, e.g. the target ratio. */
  readonly target?: { readonly value: number; readonly label: string };
}

const COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2'];
const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function barChart(bars: readonly Bar[], options: ChartOptions): string {
  const labelWidth = 190;
  const plotWidth = 420;
  const rowHeight = 26;
  const top = 40;
  const height = top + bars.length * rowHeight + 30;
  const max = Math.max(...bars.map((b) => b.value), options.target?.value ?? 0) * 1.15 || 1;
  const x = (v: number): number => labelWidth + (v / max) * plotWidth;
  const groups = [...new Set(bars.map((b) => b.group ?? ''))];
  const rows = bars.map((b, i) => {
    const y = top + i * rowHeight;
    const colour = COLOURS[groups.indexOf(b.group ?? '') % COLOURS.length] ?? COLOURS[0];
    return [
      `<text x="${labelWidth - 8}" y="${y + 17}" text-anchor="end">${escape(b.label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 4}" width="${Math.max(1, x(b.value) - labelWidth).toFixed(1)}" height="${rowHeight - 8}" fill="${colour}"/>`,
      `<text x="${(x(b.value) + 6).toFixed(1)}" y="${y + 17}">${escape(`${round(b.value)} ${options.unit}`)}</text>`,
    ].join('');
  });
  const target =
    options.target === undefined
      ? ''
      : [
          `<line x1="${x(options.target.value).toFixed(1)}" y1="${top - 4}" x2="${x(options.target.value).toFixed(1)}" y2="${top + bars.length * rowHeight}" stroke="#888" stroke-dasharray="4 3"/>`,
          `<text x="${x(options.target.value).toFixed(1)}" y="${top + bars.length * rowHeight + 16}" text-anchor="middle" fill="#555">${escape(options.target.label)}</text>`,
        ].join('');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 120}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="12" y="22" font-size="14" font-weight="bold">${escape(options.title)}</text>`,
    ...rows,
    target,
    '</svg>',
    '',
  ].join('\n');
}

function round(v: number): string {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}
