/**
 * Which slots hold which document's vectors, in flat typed arrays rather than a Map of arrays
 * (a Map costs tens of bytes per document; this costs 4 bytes per docid and 10 per slot).
 * Internal docids are dense (allocated in sequence by the index), so they index an array.
 * Each slot also knows its owner and its position in the owner's list, which is what the store
 * persists (see store.ts: owner blocks) and rebuilds the lists from (`load`); until a change,
 * the owners stay as the store opened them (SlotOwners: an offset per block of consecutive ones).
 */
import { BLOCK, SHIFT } from './segments.js';

const NONE = -1;
/** Owner of a slot that belongs to no document. */
export const NO_OWNER = 0xffffffff;
/** Documents handed to a bitmap at a time (`documents`). */
const DOC_CHUNK = 16_384;

/** The owners of a block whose slots are all free (shared, never written). */
const FREE_BLOCK = new Uint32Array(BLOCK).fill(NO_OWNER);

/**
 * The slots' owners as a store opens them, by blocks of 256 slots. A block whose slots all hold
 * consecutive documents (a build stores documents in the order it numbers them, one vector
 * each) keeps one offset; any other block keeps its 256 owners. A serving process holds about
 * 2 bytes per 256 vectors instead of 4 bytes per vector while the index grew by appending.
 */
export class SlotOwners {
  /** Per block: owner = slot + offset, when `lists` has no array for it. */
  private readonly offsets: Int32Array;
  private readonly lists: Array<Uint32Array | undefined>;

  constructor(readonly blocks: number) {
    this.offsets = new Int32Array(blocks);
    this.lists = new Array<Uint32Array | undefined>(blocks).fill(undefined);
  }

  /** The owners of every slot of `flat` (blocks of `flat` are viewed, not copied). */
  static fromFlat(flat: Uint32Array): SlotOwners {
    const blocks = Math.ceil(flat.length / BLOCK);
    const out = new SlotOwners(blocks);
    for (let b = 0; b < blocks; b++) {
      const list = flat.subarray(b * BLOCK, (b + 1) * BLOCK);
      out.lists[b] = list.length === BLOCK ? list : Uint32Array.from({ length: BLOCK }, (_, i) => list[i] ?? NO_OWNER);
    }
    return out;
  }

  /** Block `b`'s 256 owners (`owners` is read, not kept). */
  setBlock(b: number, owners: Uint32Array): void {
    const first = owners[0]!;
    const offset = first - b * BLOCK;
    let consecutive = first !== NO_OWNER;
    for (let i = 1; i < BLOCK && consecutive; i++) consecutive = owners[i] === first + i;
    if (consecutive) {
      this.offsets[b] = offset;
      this.lists[b] = undefined;
    } else {
      let free = true;
      for (let i = 0; i < BLOCK && free; i++) free = owners[i] === NO_OWNER;
      this.lists[b] = free ? FREE_BLOCK : Uint32Array.from(owners);
    }
  }

  /** A block never set reads as free. */
  markFree(b: number): void {
    this.lists[b] = FREE_BLOCK;
  }

  get(slot: number): number {
    const b = slot >>> SHIFT;
    if (b >= this.blocks) return NO_OWNER;
    const list = this.lists[b];
    return list ? list[slot & (BLOCK - 1)]! : slot + this.offsets[b]!;
  }

  /** Every owner in one array of `length` (at least the blocks' slots). */
  flat(length: number): Uint32Array {
    const out = new Uint32Array(Math.max(length, this.blocks * BLOCK)).fill(NO_OWNER);
    for (let b = 0; b < this.blocks; b++) {
      const list = this.lists[b];
      if (list) out.set(list, b * BLOCK);
      else for (let i = 0, s = b * BLOCK; i < BLOCK; i++, s++) out[s] = s + this.offsets[b]!;
    }
    return out;
  }

  get byteLength(): number {
    let bytes = this.offsets.byteLength + this.lists.length * 8;
    for (const list of this.lists) if (list && list !== FREE_BLOCK) bytes += list.byteLength;
    return bytes;
  }
}

export class DocSlots {
  private head = new Int32Array(0);
  private next = new Int32Array(0);
  private owner: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  /**
   * The owners as opened (see SlotOwners), while nothing changed them: `owner` is empty then, and
   * made whole by the first change or the first use of the lists (`own`).
   */
  private opened: SlotOwners | null = null;
  /**
   * Empty while every document has one vector (every position 0, see `load`): 2 bytes per
   * vector less while serving; made whole at the first `set`.
   */
  private position: Uint16Array<ArrayBufferLike> = new Uint16Array(0);
  /**
   * The documents' lists (`head`, `next`) are built from the owners at their first use: a
   * process that only answers unfiltered searches needs each slot's owner, not the lists (8 bytes
   * per vector less while serving).
   */
  private listed = true;
  /** Slots whose owners `load` adopted (the lists cover these once built). */
  private loaded = 0;

  private growDocs(docid: number): void {
    if (docid < this.head.length) return;
    const head = new Int32Array(Math.max(docid + 1, Math.ceil(this.head.length * 1.5), 1024)).fill(NONE);
    head.set(this.head);
    this.head = head;
  }

  /** Make the owners one flat array (before a change, or to build the lists). */
  private own(): void {
    if (!this.opened) return;
    this.owner = this.opened.flat(this.loaded);
    this.opened = null;
  }

  private growSlots(slot: number): void {
    this.own();
    if (slot < this.next.length && slot < this.owner.length) return;
    const size = Math.max(slot + 1, Math.ceil(Math.max(this.next.length, this.owner.length) * 1.5), 1024);
    const next = new Int32Array(size).fill(NONE);
    next.set(this.next);
    const owner = new Uint32Array(size).fill(NO_OWNER);
    owner.set(this.owner.subarray(0, size));
    const position = new Uint16Array(size);
    position.set(this.position.subarray(0, size));
    this.next = next;
    this.owner = owner;
    this.position = position;
  }

  /** Size the arrays for `docs` docids and `slots` slots up front (avoids growth slack). */
  reserve(docs: number, slots: number): void {
    if (docs > 0) this.growDocs(docs - 1);
    if (slots > 0) this.growSlots(slots - 1);
  }

  get(docid: number): number[] | undefined {
    this.list();
    if (docid >= this.head.length || this.head[docid] === NONE) return undefined;
    const out: number[] = [];
    for (let s = this.head[docid]!; s !== NONE; s = this.next[s]!) out.push(s);
    return out;
  }

  set(docid: number, slots: readonly number[]): void {
    this.list();
    this.delete(docid);
    if (slots.length === 0) return;
    this.growDocs(docid);
    // every position was 0 (see `load`)
    if (this.position.length < this.owner.length) this.position = new Uint16Array(this.owner.length);
    for (const s of slots) this.growSlots(s);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i]!;
      this.owner[s] = docid;
      this.position[s] = i;
      this.next[s] = i + 1 < slots.length ? slots[i + 1]! : NONE;
    }
    this.head[docid] = slots[0]!;
  }

  delete(docid: number): void {
    this.list();
    if (docid >= this.head.length) return;
    for (let s = this.head[docid]!; s !== NONE; ) {
      const n = this.next[s]!;
      this.next[s] = NONE;
      this.owner[s] = NO_OWNER;
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
    this.list();
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
    return this.opened ? this.opened.get(slot) : this.owner[slot]!;
  }

  /** The document of `slot` (NO_OWNER when none) and the slot's position in its list. */
  ownerOf(slot: number): number {
    if (this.opened) return this.opened.get(slot);
    return slot < this.owner.length ? this.owner[slot]! : NO_OWNER;
  }

  positionOf(slot: number): number {
    return slot < this.position.length ? this.position[slot]! : 0;
  }

  /**
   * Adopt the owner and position of each of `slots` slots (NO_OWNER: free; both are kept, not
   * copied; `position` may be empty when every position is 0); the lists are built at their
   * first use (`list`), the owners made one array at the first change.
   */
  load(owners: SlotOwners, position: Uint16Array, slots: number): void {
    this.head = new Int32Array(0);
    this.next = new Int32Array(0);
    this.owner = new Uint32Array(0);
    this.opened = owners;
    let several = false;
    for (let s = 0; s < slots && s < position.length && !several; s++) several = owners.get(s) !== NO_OWNER && position[s] !== 0;
    this.position = several ? position : new Uint16Array(0);
    this.loaded = slots;
    this.listed = false;
  }

  /**
   * Add every document that has a slot to `into` (returned), a chunk at a time: an array of
   * every document, made and dropped at each open, is memory the allocator keeps.
   */
  documents<T extends { addMany(values: Uint32Array): unknown }>(into: T): T {
    const position = this.position;
    const chunk = new Uint32Array(Math.min(DOC_CHUNK, Math.max(1, this.loaded)));
    let n = 0;
    for (let s = 0; s < this.loaded; s++) {
      // a document's first vector (position 0) stands for it
      const owner = this.ownerOf(s);
      if (owner === NO_OWNER || (s < position.length && position[s] !== 0)) continue;
      chunk[n++] = owner;
      if (n === chunk.length) {
        into.addMany(chunk);
        n = 0;
      }
    }
    if (n > 0) into.addMany(chunk.subarray(0, n));
    return into;
  }

  /**
   * Build every list from the owners `load` adopted. One pass for the first vectors of the
   * documents; the few further ones are sorted and chained after them.
   */
  private list(): void {
    if (this.listed) return;
    this.listed = true;
    this.own();
    const owner = this.owner;
    const position = this.position;
    const slots = this.loaded;
    let maxDoc = -1;
    for (let s = 0; s < slots; s++) if (owner[s] !== NO_OWNER && owner[s]! > maxDoc) maxDoc = owner[s]!;
    this.next = new Int32Array(owner.length).fill(NONE);
    this.head = new Int32Array(0);
    this.reserve(maxDoc + 1, 0);
    const later: number[] = [];
    for (let s = 0; s < slots; s++) {
      const d = owner[s]!;
      if (d === NO_OWNER) continue;
      if (s >= position.length || position[s] === 0) this.head[d] = s;
      else later.push(s);
    }
    later.sort((a, b) => owner[a]! - owner[b]! || position[a]! - position[b]!);
    for (let i = 0; i < later.length; i++) {
      const s = later[i]!;
      const prev = position[s] === 1 ? this.head[owner[s]!]! : later[i - 1]!;
      if (prev !== undefined && prev !== NONE) this.next[prev] = s;
    }
  }

  get byteLength(): number {
    return this.head.byteLength + this.next.byteLength + this.owner.byteLength + (this.opened?.byteLength ?? 0) + this.position.byteLength;
  }
}
