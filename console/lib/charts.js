import { h, svg } from './dom.js';

/**
 * Small SVG charts drawn from numbers the page has: each has a text alternative saying what it
 * shows, for readers that cannot see it.
 */

/**
 * A sparkline of recent values (a projection's lag over the last minutes).
 * @param {number[]} values
 * @param {string} label
 */
export const sparkline = (values, label) => {
  const width = 120;
  const height = 28;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map(
    (value, index) => `${(index * step).toFixed(1)},${(height - 2 - (value / max) * (height - 4)).toFixed(1)}`,
  );
  return h(
    'span',
    { class: 'sparkline', role: 'img', 'aria-label': label, title: label },
    svg(
      'svg',
      { viewBox: `0 0 ${width} ${height}`, width, height, 'aria-hidden': 'true', focusable: 'false' },
      svg('line', { x1: 0, y1: height - 2, x2: width, y2: height - 2, class: 'spark-base' }),
      values.length > 1
        ? svg('polyline', { points: points.join(' '), class: 'spark-line' })
        : svg('circle', { cx: width - 2, cy: height - 2, r: 2, class: 'spark-dot' }),
    ),
  );
};

/**
 * Stacked bars over time: per bucket, values of several series (done and failed transfers).
 * @param {{ label: string, values: number[] }[]} buckets
 * @param {{ name: string, className: string }[]} series
 * @param {string} description
 */
export const stackedBars = (buckets, series, description) => {
  const width = 720;
  const height = 180;
  const bottom = 24;
  const top = 10;
  const left = 36;
  const max = Math.max(1, ...buckets.map((bucket) => bucket.values.reduce((sum, value) => sum + value, 0)));
  const slot = (width - left) / Math.max(1, buckets.length);
  const scale = (/** @type {number} */ value) => (value / max) * (height - top - bottom);
  const bars = buckets.flatMap((bucket, index) => {
    let y = height - bottom;
    return bucket.values.map((value, seriesIndex) => {
      const barHeight = scale(value);
      y -= barHeight;
      const rect = svg('rect', {
        x: (left + index * slot + slot * 0.15).toFixed(1),
        y: y.toFixed(1),
        width: (slot * 0.7).toFixed(1),
        height: barHeight.toFixed(1),
        class: series[seriesIndex]?.className ?? '',
      });
      rect.appendChild(svg('title', {}, `${bucket.label}: ${value} ${series[seriesIndex]?.name ?? ''}`));
      return rect;
    });
  });
  const labels = buckets.map((bucket, index) =>
    index % 2 === 0
      ? svg(
          'text',
          {
            x: (left + index * slot + slot / 2).toFixed(1),
            y: height - 6,
            class: 'axis-label',
            'text-anchor': 'middle',
          },
          bucket.label,
        )
      : null,
  );
  return h(
    'figure',
    { class: 'chart' },
    svg(
      'svg',
      {
        viewBox: `0 0 ${width} ${height}`,
        role: 'img',
        'aria-label': description,
        preserveAspectRatio: 'none',
        class: 'chart-svg',
      },
      svg('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: 'axis' }),
      svg('text', { x: left - 6, y: top + 8, class: 'axis-label', 'text-anchor': 'end' }, String(max)),
      svg('text', { x: left - 6, y: height - bottom, class: 'axis-label', 'text-anchor': 'end' }, '0'),
      ...bars,
      ...labels.filter((label) => label !== null),
    ),
    h(
      'figcaption',
      { class: 'legend' },
      series.map((item) =>
        h(
          'span',
          { class: 'legend-item' },
          h('span', { class: `legend-swatch ${item.className}`, 'aria-hidden': 'true' }),
          item.name,
        ),
      ),
    ),
  );
};
