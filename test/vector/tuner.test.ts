/** The beam calibration (tuner.ts): decisions from probes, deterministic. */
import { describe, expect, test } from 'vitest';
import { BeamTuner } from '../../src/engine/vector/tuner.js';

/** Serve `searches` searches of a graph of `size`; every probe reports `recall` and the two times. */
function serve(tuner: BeamTuner, size: number, searches: number, recall: number, walkMs: number, scanMs: number, wanted = 10): number {
  let probes = 0;
  for (let i = 0; i < searches; i++) {
    if (tuner.probe(size)) {
      probes++;
      tuner.record(Math.round(recall * wanted), wanted, walkMs, scanMs);
    }
  }
  return probes;
}

describe('beam tuner', () => {
  test('a walk at its target keeps the formula beam and probes rarely once settled', () => {
    const t = new BeamTuner();
    // two windows at least before the beam is kept
    expect(serve(t, 50_000, 96, 1, 0.3, 3)).toBe(48);
    expect(t.ef(150)).toBe(150);
    expect(t.scans(50_000)).toBe(false);
    // settled: probes cost 2.5% of the walks' time, a scan costing 10 walks: one search in 400
    expect(serve(t, 50_000, 2000, 1, 0.3, 3)).toBe(5);
  });

  test('a walk below target widens its beam while that stays cheaper than the scan', () => {
    const t = new BeamTuner();
    serve(t, 50_000, 48, 0.8, 0.5, 10);
    expect(t.ef(100)).toBe(150);
    serve(t, 50_000, 48, 0.8, 0.5, 10);
    expect(t.ef(100)).toBe(225);
    serve(t, 50_000, 48, 1, 0.5, 10);
    expect(t.ef(100)).toBe(225);
    expect(t.scans(50_000)).toBe(false);
  });

  test('a walk just short of its target widens by a smaller step, so the beam does not overshoot', () => {
    const t = new BeamTuner();
    // 0.96 against a target of 0.97: a quarter wider, not half
    serve(t, 200_000, 48, 0.96, 1, 20, 100);
    expect(t.ef(168)).toBe(210);
    serve(t, 200_000, 48, 1, 1.25, 20);
    expect(t.ef(168)).toBe(210);
    // far short: the full step
    const far = new BeamTuner();
    serve(far, 200_000, 48, 0.9, 1, 20, 100);
    expect(far.ef(168)).toBe(252);
  });

  test('when a wider walk would cost as much as the scan, the store scans, and tries the walk again now and then', () => {
    const t = new BeamTuner();
    serve(t, 50_000, 48, 0.85, 1.5, 2);
    expect(t.scans(50_000)).toBe(true);
    // no probes for 127 searches, then a trial: 48 searches in a row answered both ways
    expect(serve(t, 50_000, 127, 0.85, 1.5, 2)).toBe(0);
    expect(serve(t, 50_000, 48, 0.85, 1.5, 2)).toBe(48);
    expect(t.scans(50_000)).toBe(true);
    // the walk is still no better: the next trial comes twice as late
    expect(serve(t, 50_000, 255, 0.85, 1.5, 2)).toBe(0);
    expect(serve(t, 50_000, 48, 0.85, 1.5, 2)).toBe(48);
  });

  test('a scan chosen on a cold start goes back to the walk once the walk is cheaper at its target', () => {
    const t = new BeamTuner();
    // cold pages: the walk's scattered reads fault, the scan's sequential ones do not
    serve(t, 200_000, 48, 0.9, 9, 6);
    expect(t.scans(200_000)).toBe(true);
    // warm: the trial finds the walk cheap but short of the target, so the beam widens and the
    // next trial follows at once
    serve(t, 200_000, 128 + 47, 0.9, 0.5, 6);
    expect(t.scans(200_000)).toBe(true);
    expect(t.ef(100)).toBe(150);
    expect(serve(t, 200_000, 48, 1, 0.7, 6)).toBe(48);
    // one trial's window at the new beam is not enough to be sure: another follows at once
    expect(t.scans(200_000)).toBe(true);
    expect(serve(t, 200_000, 48, 1, 0.7, 6)).toBe(48);
    expect(t.scans(200_000)).toBe(false);
    expect(t.ef(100)).toBe(150);
  });

  test("a trial's first half only warms: its times do not count", () => {
    const t = new BeamTuner();
    serve(t, 200_000, 48, 0.95, 9, 6, 100);
    expect(t.scans(200_000)).toBe(true);
    serve(t, 200_000, 127, 0.95, 9, 6, 100);
    // 24 cold walks, then 24 warm ones at the target: walk again
    serve(t, 200_000, 24, 0.5, 60, 6);
    serve(t, 200_000, 24, 1, 1, 6, 100);
    expect(t.scans(200_000)).toBe(false);
  });

  test('a beam whose recall sits at the target keeps it: windows on either side of the target are pooled, not judged one by one', () => {
    const t = new BeamTuner();
    // windows of 0.96 and 0.99 in turn (0.975 pooled, target 0.97), for 40 windows
    serve(t, 200_000, 48, 0.99, 0.6, 6, 100);
    for (let w = 0; w < 40; w++) {
      const recall = w % 2 === 0 ? 0.96 : 0.99;
      let probes = 0;
      while (probes < 24) if (t.probe(200_000)) probes++, t.record(Math.round(recall * 100), 100, 0.6, 6);
    }
    expect(t.ef(168)).toBe(168);
    // pooled recall below the target widens the beam, even when some windows pass
    let windows = 0;
    while (t.ef(168) === 168 && windows < 16) {
      const recall = windows++ % 2 === 0 ? 0.93 : 0.98;
      let probes = 0;
      while (probes < 24) if (t.probe(200_000)) probes++, t.record(Math.round(recall * 100), 100, 0.6, 6);
    }
    expect(t.ef(168)).toBe(210);
    expect(windows).toBeGreaterThan(1);
  });

  test('a window that reaches the target by luck does not settle the beam: probes go on until the pooled recall is sure', () => {
    // 23 queries in 24 find all 10 neighbours, one finds 4 of them: 0.975, but spread
    const window = (t: BeamTuner, low: number) => {
      let probes = 0;
      while (probes < 24) if (t.probe(50_000)) t.record(probes++ % 24 === 23 ? low : 10, 10, 0.5, 5);
    };
    const t = new BeamTuner();
    window(t, 4);
    // not settled: the next window is probed early (one search in two)
    expect(serve(t, 50_000, 10, 1, 0.5, 5)).toBe(5);
    // the next windows show the beam short of the target: wider
    const lucky = new BeamTuner();
    window(lucky, 4);
    serve(lucky, 50_000, 48, 0.9, 0.5, 5);
    expect(lucky.ef(100)).toBe(150);
    // at the target, the mean decides after four windows
    const steady = new BeamTuner();
    for (let w = 0; w < 4; w++) window(steady, 4);
    expect(steady.ef(100)).toBe(100);
    expect(serve(steady, 50_000, 100, 1, 0.5, 5)).toBeLessThan(2);
  });

  test('a graph that doubles or halves starts a new calibration', () => {
    const t = new BeamTuner();
    serve(t, 50_000, 48, 0.85, 1.5, 2);
    expect(t.scans(90_000)).toBe(true);
    expect(t.scans(100_001)).toBe(false);
    expect(t.ef(100)).toBe(100);
  });
});
