/**
 * The beam of the graph walk, calibrated on the searches it serves.
 *
 * How wide a beam must be for a given recall depends on the data and, above all, on how far the
 * queries fall from the stored vectors: GloVe-100 queries against its 50,000 most frequent words
 * (top-10 cosine 0.3-0.45) need a beam of more than 600 for recall@10 0.95 on a graph that
 * reaches 0.95 at 168 on 200,000 words (hnswlib-node behaves the same). No formula of the size
 * alone serves both, so the store measures instead: now and then a search is answered twice,
 * by the walk and by an exact scan of the codes, and the share of the scan's neighbours that the
 * walk found is the walk's recall on real traffic. Below the target the beam widens; when the
 * wider walk would cost more than the scan, the store scans (exact, and then cheaper). A graph
 * that doubles or halves starts a new calibration.
 *
 * The choice to scan is revisited by trials: now and then, 2 * WINDOW searches in a row are
 * answered both ways, and the second half of them decides again. The first probes after a start
 * run on a cold page cache, where the walk's scattered reads fault and the scan's sequential ones
 * do not, and a scanning store lets the graph's pages go cold again; inside a memory limit that
 * made the store scan for good at half the speed its walk reaches once its pages are in memory.
 * A trial's first half warms those pages; its answers are the scan's, so recall never drops.
 *
 * The recall a decision reads is pooled over every window probed at the current beam (older
 * windows fading once POOL probes are reached), not the last window alone. With one window
 * per decision, a beam whose true recall sat near the target failed about every other window,
 * and each failure widened the beam for good: over a long run the beam crept up until the
 * windows' noise no longer reached the target (GloVe-100 at 200k: from ef 210, recall 0.967, to
 * 262 and beyond, 1.2x the CPU per step). Pooled, the estimate's noise shrinks as probes add
 * up. (A target of 0.96 was tried: 200k settled at ef 168, recall 0.956, where hnswlib-node's
 * CPU per search falls further than ours does: 0.41x its speed per CPU-second at that recall.)
 */

/** Recall the walk must keep on the pooled probes (above the 0.95 promised: a first window's standard error is 0.013-0.025). */
const TARGET = 0.97;
/** Probes pooled per beam before older ones fade (each time the pool reaches it, it counts half). */
const POOL = 8 * 24;
/**
 * A beam is kept (the calibration settles) once its pooled recall reaches TARGET and is sure to
 * be above FLOOR: the recall promised, SURE standard errors below the pooled mean, the error
 * taken from the spread of the probes' own recalls (the neighbours of one query are not
 * independent draws). GloVe-100 at 50k: a beam of true recall 0.935 showed 0.96 in one window
 * in four, and a store settled on it. At least two windows are pooled; unsure, more are
 * probed early, at most DECIDE probes; then the mean alone decides.
 */
const FLOOR = 0.95;
const SURE = 2;
const DECIDE = 4 * 24;
/** Probes per decision: 240 neighbours at k = 10, a standard error of about 0.015 on the recall. */
const WINDOW = 24;
/** While calibrating, one search in PROBE_EARLY is probed. */
const PROBE_EARLY = 2;
/** Once settled, probes cost at most this share of the time the walks take (pooling keeps the estimate steady with few). */
const PROBE_SHARE = 0.025;
/** The beam never grows beyond this multiple of the formula's. */
const MAX_BOOST = 16;
const GROWTH = 1.5;
/** Searches between the start of scanning and its first trial; doubled after each trial that keeps scanning. */
const FIRST_TRIAL_AFTER = 128;
const LAST_TRIAL_AFTER = 8192;
/**
 * The step when the walk is just short of its target (within NEAR): the recall a beam buys
 * flattens as it widens, so a full step there overshoots (GloVe-100 at 200k: 0.962 at the
 * formula's 168, 0.967 at 210, 0.978 at 252, at 1.2x the CPU of 210).
 */
const NEAR_GROWTH = 1.25;
const NEAR = 0.02;

export class BeamTuner {
  private boost = 1;
  private scanning = false;
  private settled = false;
  private size = 0;
  private searches = 0;
  private hits = 0;
  private wanted = 0;
  private probes = 0;
  /** Neighbours found and wanted over the windows probed at the current beam (see POOL). */
  private poolHits = 0;
  private poolWanted = 0;
  private poolProbes = 0;
  /** Sums of the probes' recalls and of their squares, in the window and in the pool. */
  private sumR = 0;
  private sumR2 = 0;
  private poolR = 0;
  private poolR2 = 0;
  private walkMs = 0;
  private scanMs = 0;
  /** Once settled: one search in `lateRate` is probed (from the last window's costs). */
  private lateRate = 256;
  /** While scanning: searches until the next trial, its spacing, and the trial's probes left. */
  private untilTrial = 0;
  private trialEvery = FIRST_TRIAL_AFTER;
  private trialLeft = 0;

  /** The beam for a walk whose formula gives `base`. */
  ef(base: number): number {
    return Math.round(base * this.boost);
  }

  /** True when an exact scan of the codes answers better and cheaper than the walk. */
  scans(size: number): boolean {
    this.follow(size);
    return this.scanning;
  }

  /**
   * Whether this search should be answered both ways, to measure the walk (while walking: also by
   * a scan; while scanning, during a trial: also by a walk).
   */
  probe(size: number): boolean {
    this.follow(size);
    if (this.scanning) return this.inTrial();
    this.searches++;
    // the first search of a fresh store is never a probe: it answers as fast as the walk can
    return this.searches % (this.settled ? this.lateRate : PROBE_EARLY) === 0;
  }

  /** One probe: the walk found `found` of the scan's `wanted` neighbours, in `walkMs` against `scanMs`. */
  record(found: number, wanted: number, walkMs: number, scanMs: number): void {
    // a trial's first half only warms the walk's pages
    if (this.scanning && this.trialLeft >= WINDOW) return;
    this.hits += found;
    this.wanted += wanted;
    const r = wanted === 0 ? 1 : found / wanted;
    this.sumR += r;
    this.sumR2 += r * r;
    this.walkMs += walkMs;
    this.scanMs += scanMs;
    if (++this.probes < WINDOW) return;
    const recall = this.pooled();
    if (this.scanning) this.endTrial(recall);
    else if (recall >= TARGET) {
      if (this.sure()) this.settled = true;
    } else {
      const step = this.step(recall);
      if (this.boost * step > MAX_BOOST || this.walkMs * step >= this.scanMs) this.startScanning();
      else {
        this.widen(step);
        this.settled = false;
      }
    }
    // a scan costs scanMs / walkMs walks: probe seldom enough that the scans stay a small share
    this.lateRate = Math.min(4096, Math.max(16, Math.ceil(this.scanMs / Math.max(1e-6, this.walkMs) / PROBE_SHARE)));
    this.clearWindow();
  }

  private clearWindow(): void {
    this.hits = this.wanted = this.probes = 0;
    this.sumR = this.sumR2 = 0;
    this.walkMs = this.scanMs = 0;
  }

  /** The window just ended joins the pool of the current beam; the pool's recall. */
  private pooled(): number {
    if (this.poolProbes >= POOL) {
      this.poolHits /= 2;
      this.poolWanted /= 2;
      this.poolProbes /= 2;
      this.poolR /= 2;
      this.poolR2 /= 2;
    }
    this.poolHits += this.hits;
    this.poolWanted += this.wanted;
    this.poolProbes += this.probes;
    this.poolR += this.sumR;
    this.poolR2 += this.sumR2;
    return this.poolWanted === 0 ? 1 : this.poolHits / this.poolWanted;
  }

  /** The pooled recall (at or above TARGET) is sure to be above FLOOR, or enough probes were pooled for its mean to decide. */
  private sure(): boolean {
    const n = this.poolProbes;
    if (n >= DECIDE) return true;
    if (n < 2 * WINDOW) return false;
    const mean = this.poolR / n;
    const variance = Math.max(0, this.poolR2 / n - mean * mean);
    return mean - SURE * Math.sqrt(variance / n) >= FLOOR;
  }

  private clearPool(): void {
    this.poolHits = this.poolWanted = this.poolProbes = 0;
    this.poolR = this.poolR2 = 0;
  }

  /** A wider beam: what was pooled at the narrower one no longer says anything. */
  private widen(step: number): void {
    this.boost *= step;
    this.clearPool();
  }

  /** How much wider the beam gets for a window short of the target. */
  private step(recall: number): number {
    return recall >= TARGET - NEAR ? NEAR_GROWTH : GROWTH;
  }

  private startScanning(): void {
    this.scanning = true;
    this.settled = false;
    this.trialEvery = FIRST_TRIAL_AFTER;
    this.untilTrial = this.trialEvery;
  }

  /** Counts a scanning search; true while it belongs to a trial. */
  private inTrial(): boolean {
    if (this.trialLeft > 0) {
      this.trialLeft--;
      return true;
    }
    if (--this.untilTrial > 0) return false;
    this.trialLeft = 2 * WINDOW - 1;
    this.clearWindow();
    return true;
  }

  /** A trial's decision: walk again once that is as good and cheaper; else widen the beam if that stays cheaper. */
  private endTrial(recall: number): void {
    this.trialLeft = 0;
    if (recall >= TARGET && this.walkMs < this.scanMs) {
      if (!this.sure()) {
        // promising, not sure yet: another trial at once, pooled with this one
        this.untilTrial = 1;
        return;
      }
      this.scanning = false;
      this.settled = true;
      return;
    }
    const step = this.step(recall);
    if (recall < TARGET && this.boost * step <= MAX_BOOST && this.walkMs * step < this.scanMs) {
      this.widen(step);
      this.untilTrial = 1;
      return;
    }
    this.trialEvery = Math.min(LAST_TRIAL_AFTER, this.trialEvery * 2);
    this.untilTrial = this.trialEvery;
  }

  /** A graph twice as large or half as large as the one calibrated: start again. */
  private follow(size: number): void {
    if (this.size > 0 && size <= this.size * 2 && size * 2 >= this.size) return;
    this.size = Math.max(1, size);
    this.boost = 1;
    this.clearPool();
    this.scanning = this.settled = false;
    this.trialLeft = 0;
    this.searches = 0;
    this.clearWindow();
  }
}
