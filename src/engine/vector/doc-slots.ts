/**
 * Which slots hold which document's vectors, in flat typed arrays rather than a Map of arrays
 * (a Map costs tens of bytes per document; this costs 4 bytes per docid and 8 per slot).
 * Internal docids are dense (allocated in sequence by the index), so they index an array.
 */
const NONE = -1;

export class DocSlots {
  private head = new Int32Array(0);
  private next = new Int32Array(0);
  private owner = new Uint32Array(0);

  private growDocs(docid: number): void {
    if (docid < this.head.length) return;
    const head = new Int32Array(Math.max(docid + 1, Math.ceil(this.head.length * 1.5), 1024)).fill(NONE);
    head.set(this.head);
    this.head = head;
  }

  private growSlots(slot: number): void {
    if (slot < this.next.length) return;
    const size = Math.max(slot + 1, Math.ceil(this.next.length * 1.5), 1024);
    const next = new Int32Array(size).fill(NONE);
    next.set(this.next);
    const owner = new Uint32Array(size);
    owner.set(this.owner);
    this.next = next;
    this.owner = owner;
  }

  /** Size the arrays for `docs` docids and `slots` slots up front (avoids growth slack). */
  reserve(docs: number, slots: number): void {
    if (docs > 0) this.growDocs(docs - 1);
    if (slots > 0) this.growSlots(slots - 1);
  }

  get(docid: number): number[] | undefined {
    if (docid >= this.head.length || this.head[docid] === NONE) return undefined;
    const out: number[] = [];
    for (let s = this.head[docid]!; s !== NONE; s = this.next[s]!) out.push(s);
    return out;
  }

  set(docid: number, slots: readonly number[]): void {
    this.delete(docid);
    if (slots.length === 0) return;
    this.growDocs(docid);
    for (const s of slots) this.growSlots(s);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      this.owner[s] = docid;
      this.next[s] = i + 1 < slots.length ? slots[i + 1]! : NONE;
    }
    this.head[docid] = slots[0]!;
  }

  delete(docid: number): void {
    if (docid >= this.head.length) return;
    for (let s = this.head[docid]!; s !== NONE; ) {
      const n = this.next[s]!;
      this.next[s] = NONE;
      s = n;
    }
    this.head[docid] = NONE;
  }

  /**
   * Set `mask[slot] = 1` for every slot of the given documents; returns how many of them are
   * in the graph (`levels[slot] >= 0`), pushing those to `collect` when given (one pass, no allocation per
   * document: filters can hold millions).
   */
  mark(docids: Uint32Array, mask: Uint8Array, levels: Int8Array, collect?: number[]): number {
    const head = this.head;
    const next = this.next;
    let count = 0;
    for (let i = 0; i < docids.length; i++) {
      const d = docids[i]!;
      if (d >= head.length) continue;
      for (let s = head[d]!; s !== NONE; s = next[s]!) {
        mask[s] = 1;
        if (levels[s]! >= 0) {
          count++;
          collect?.push(s);
        }
      }
    }
    return count;
  }

  docOf(slot: number): number {
    return this.owner[slot]!;
  }

  get byteLength(): number {
    return this.head.byteLength + this.next.byteLength + this.owner.byteLength;
  }
}
