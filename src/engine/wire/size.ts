/** Sizes for people, as the reference writes them with `sizeFormat=human` and in compaction details. */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Binary units, two decimals past bytes: `636 B`, `19.64 MiB`. */
export function humanSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(2)} ${UNITS[unit]}`;
}

/**
 * A size in the largest binary unit that shows it exactly to three decimals, as the reference's
 * task queue compaction summary writes its sizes (`456 KiB`, `1.5 MiB`, `4097 B`).
 */
export function exactSize(bytes: number): string {
  for (let unit = UNITS.length - 1; unit > 0; unit--) {
    const value = bytes / 1024 ** unit;
    if (value < 1) continue;
    const thousandths = value * 1000;
    if (Math.abs(thousandths - Math.round(thousandths)) < 1e-6)
      return `${Number(value.toFixed(3))} ${UNITS[unit]}`;
  }
  return `${bytes} B`;
}
