import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: number[];
}

const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4b5563', '#65a30d'];

/**
 * A daily time series chart (uPlot on a canvas). The canvas is a picture: `summary` names what it shows for screen readers,
 * and every page that draws one also shows the numbers in a table.
 */
export function TimeChart({ days, series, summary, unit }: { days: string[]; series: ChartSeries[]; summary: string; unit: string }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const width = Math.max(280, element.clientWidth);
    const x = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        width,
        height: 220,
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        series: [{}, ...series.map((entry, index) => ({ label: entry.label, stroke: COLOURS[index % COLOURS.length], width: 2, value: (_plot: uPlot, value: number | null) => (value === null ? '—' : `${value.toLocaleString()} ${unit}`) }))],
        // Small spends (fractions of a cent) keep their significant digits on the axis.
        axes: [{}, { size: 80, values: (_plot: uPlot, ticks: number[]) => ticks.map((tick) => String(Number(tick.toPrecision(3)))) }],
        legend: { show: series.length > 0 },
      },
      [x, ...series.map((entry) => entry.values)],
      element,
    );
    const resize = () => plot.setSize({ width: Math.max(280, element.clientWidth), height: 220 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [days, series, unit]);
  return <figure className="chart" role="img" aria-label={summary} ref={holder} />;
}
