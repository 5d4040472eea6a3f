/** How error messages name a received value, in the reference's words (`a string: "x"`). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array: \`${JSON.stringify(value)}\``;
  if (typeof value === 'string') return `a string: \`${JSON.stringify(value)}\``;
  if (typeof value === 'number') return `a number: \`${value}\``;
  if (typeof value === 'boolean') return `a boolean: \`${value}\``;
  return `an object: \`${JSON.stringify(value)}\``;
}
