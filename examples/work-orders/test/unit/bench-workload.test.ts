import { barChart } from '../../bench/chart';
import { percentile, planWorkload, WORKLOAD_SHARES } from '../../bench/three-way/workload';

describe('npm run bench: the workload and the chart', () => {
  test('the workload is seeded, and its fates come in the documented shares', () => {
    const a = planWorkload(5_000, 1, 'r');
    expect(planWorkload(5_000, 1, 'r').map((m) => m.fate)).toEqual(a.map((m) => m.fate));
    expect(planWorkload(5_000, 2, 'r').map((m) => m.fate)).not.toEqual(a.map((m) => m.fate));
    const share = (fate: string): number => a.filter((m) => m.fate === fate).length / a.length;
    expect(share('poison')).toBeCloseTo(WORKLOAD_SHARES.poison, 2);
    expect(share('overtake')).toBeCloseTo(WORKLOAD_SHARES.overtake, 1);
    expect(share('double-token')).toBeCloseTo(WORKLOAD_SHARES.doubleToken, 2);
    // Every completion has its own work order and inbox id; poison has neither.
    const ids = a.filter((m) => m.fate !== 'poison').map((m) => m.docId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(a.filter((m) => m.fate === 'poison').every((m) => m.docId === null && m.workOrderId === null)).toBe(true);
  });

  test.each([
    [[], 50, null],
    [[5], 99, 5],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50, 6],
    [[10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 99, 10],
  ])('percentile(%p, %p) = %p', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  test('the chart: one bar per value, labels escaped, the target line when asked', () => {
    const svg = barChart(
      [
        { label: 'a<b', value: 2 },
        { label: 'c', value: 1, group: 'x' },
      ],
      { title: 'T & U', unit: 'x', target: { value: 1.5, label: 'target' } },
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<rect x=/g)).toHaveLength(2);
    expect(svg).toContain('a&lt;b');
    expect(svg).toContain('T &amp; U');
    expect(svg).toContain('stroke-dasharray');
    expect(barChart([{ label: 'a', value: 1 }], { title: 't', unit: 'x' })).not.toContain('stroke-dasharray');
  });
});
