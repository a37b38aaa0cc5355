/** The chart's series, by key: their lines (stroke attributes) and their legend swatches (classes). */
export const CHART_COLORS: Record<string, string> = { fetched: '#1f6feb', stored: '#2e7d32', links: '#9a6700', errors: '#c62828' };

/** The dashboard's style sheet, served as `dashboard.css` from the control plane's own origin (the page's policy allows no inline style). */
export const DASHBOARD_STYLE = `
  :root { --ink: #1d2733; --muted: #6b7785; --line: #c9d2dc; --accent: #1f6feb; --busy: #e8f1ff; --bad: #c62828; --ok: #2e7d32; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; color: var(--ink); background: #f6f8fa; }
  header { display: flex; align-items: center; gap: 16px; padding: 12px 24px; background: #fff; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
  header h1 { font-size: 18px; margin: 0; }
  .badge { padding: 2px 10px; border-radius: 12px; font-weight: 600; background: #eee; }
  .badge.crawling { background: #dbeafe; color: #1e40af; } .badge.paused, .badge.pausing { background: #fff3cd; color: #8a6d00; }
  .badge.complete { background: #d1fae5; color: #065f46; } .badge.degraded { background: #fee2e2; color: #991b1b; }
  button { font: inherit; padding: 6px 14px; border: 1px solid var(--accent); background: var(--accent); color: #fff; border-radius: 6px; cursor: pointer; }
  #pause-button { background: #fff; color: var(--accent); }
  .muted { color: var(--muted); font-size: 12px; }
  section.warn { border-color: var(--bad); background: #fff5f5; }
  #token-form input { font: inherit; padding: 5px 8px; width: 18em; } #token-note { color: var(--bad); }
  main { padding: 16px 24px; display: grid; grid-template-columns: 1fr 1fr; gap: 16px; max-width: 1400px; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
  section.wide { grid-column: 1 / -1; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  .totals { display: flex; gap: 24px; flex-wrap: wrap; }
  .totals div { min-width: 90px; } .totals b { display: block; font-size: 22px; }
  svg text { font-family: inherit; }
  #pipeline { width: 100%; height: auto; }
  .box rect { fill: #fff; stroke: #8795a5; stroke-width: 1.5; }
  .box.busy rect { fill: var(--busy); stroke: var(--accent); }
  .box.store rect { fill: #f3f0ff; }
  .box text { text-anchor: middle; } .box .label { font-weight: 700; font-size: 13px; }
  .box .total { font-size: 12px; } .box .rate { font-size: 12px; fill: var(--accent); font-weight: 600; }
  .arrow path { fill: none; stroke: #8795a5; stroke-width: 1.6; } .arrow.busy path { stroke: var(--accent); stroke-width: 2.4; }
  .arrow text { text-anchor: middle; } .arrow .depth { font-size: 13px; font-weight: 700; } .arrow .queue { font-size: 10px; fill: var(--muted); }
  marker path { fill: #8795a5; }
  #chart { width: 100%; height: auto; } #chart .axis { stroke: var(--line); } #chart text { font-size: 11px; fill: var(--muted); }
  #chart polyline { fill: none; stroke-width: 2; }
  .legend span { margin-right: 14px; font-size: 12px; } .legend i { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
  table { border-collapse: collapse; width: 100%; font-size: 12px; }
  th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eef1f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .scroll { max-height: 300px; overflow: auto; } td.nowrap { white-space: nowrap; }
  th { position: sticky; top: 0; background: #fff; }
  td.url { max-width: 380px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  textarea, input[type=url], input[type=text] { width: 100%; font: inherit; padding: 6px; border: 1px solid var(--line); border-radius: 6px; }
  #seed-result.ok { color: var(--ok); } #seed-result.bad { color: var(--bad); }
  pre { background: #f6f8fa; padding: 8px; overflow: auto; max-height: 220px; font-size: 12px; }
  #connection { color: var(--bad); }
  .spacer { flex: 1; }
${Object.entries(CHART_COLORS)
  .map(([key, color]) => `  .legend i.${key} { background: ${color}; }`)
  .join('\n')}
`;
