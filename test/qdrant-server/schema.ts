/**
 * A JSON-schema validator for the subset the Qdrant OpenAPI 3.0 definition uses: $ref, type,
 * nullable, anyOf, oneOf, allOf, properties, required, additionalProperties, items, enum, minimum,
 * maximum, minLength, minItems, uniqueItems, and the formats uint*, uuid, float, double.
 *
 * Written here rather than adding ajv: ajv does not speak OpenAPI 3.0 `nullable` (Qdrant's
 * generator writes optional fields as `anyOf: [{$ref}, {nullable: true}]`), has no notion of
 * `bigint` (ids up to 2^64-1 arrive as bigint from the lossless parser), and the subset is small.
 *
 * Two deliberate choices:
 * - `{nullable: true}` with no `type` accepts only null. Read literally it accepts anything, which
 *   would make every `anyOf` branch pass and the validation useless.
 * - `strict` rejects properties a schema does not declare. Qdrant's serde ignores them, so a typo
 *   such as `with_vectors` is silently dropped by a real server; the test server makes it an error.
 */
import { readFileSync } from 'node:fs';

export type Schema = Record<string, unknown>;

export interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export interface Operation {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Schema }>;
  requestBody?: { content: { 'application/json': { schema: Schema } } };
}

export function loadOpenApi(path: string): OpenApi {
  return JSON.parse(readFileSync(path, 'utf8')) as OpenApi;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export class Validator {
  constructor(
    private readonly api: OpenApi,
    private readonly strict = true,
  ) {}

  /** Returns the list of problems, empty when `value` conforms. */
  validate(schema: Schema, value: unknown, path = '$'): string[] {
    const errors: string[] = [];
    this.check(schema, value, path, errors);
    return errors;
  }

  private resolve(schema: Schema): Schema {
    let s = schema;
    while (typeof s.$ref === 'string') {
      const name = s.$ref.replace('#/components/schemas/', '');
      const target = this.api.components.schemas[name];
      if (!target) throw new Error(`unresolved $ref ${s.$ref}`);
      s = target;
    }
    return s;
  }

  private check(raw: Schema, value: unknown, path: string, errors: string[]): void {
    const s = this.resolve(raw);
    if (value === null) {
      if (s.nullable === true) return;
      if (s.anyOf || s.oneOf) {
        // null may be allowed by one branch
      } else if (s.type !== undefined || Object.keys(s).some((k) => k === 'properties' || k === 'enum')) {
        errors.push(`${path}: null is not allowed`);
        return;
      }
    }
    if (s.nullable === true && s.type === undefined && !s.anyOf && !s.oneOf && !s.allOf && !s.properties) {
      if (value !== null) errors.push(`${path}: expected null`);
      return;
    }
    if (Array.isArray(s.allOf)) for (const sub of s.allOf as Schema[]) this.check(sub, value, path, errors);
    if (Array.isArray(s.anyOf)) {
      const branches = (s.anyOf as Schema[]).map((sub) => this.validate(sub, value, path));
      if (!branches.some((b) => b.length === 0)) {
        errors.push(`${path}: matches no alternative (${branches.map((b) => b[0]).join(' | ')})`);
      }
    }
    if (Array.isArray(s.oneOf)) {
      const ok = (s.oneOf as Schema[]).filter((sub) => this.validate(sub, value, path).length === 0).length;
      if (ok !== 1) errors.push(`${path}: must match exactly one alternative, matches ${ok}`);
    }
    if (Array.isArray(s.enum) && !s.enum.includes(value)) {
      errors.push(`${path}: ${JSON.stringify(value)} is not one of ${s.enum.join(', ')}`);
    }
    if (typeof s.type === 'string' && !this.checkType(s, value, path, errors)) return;
    if (typeof value === 'number' || typeof value === 'bigint') {
      if (typeof s.minimum === 'number' && value < s.minimum) errors.push(`${path}: below minimum ${s.minimum}`);
      if (typeof s.maximum === 'number' && value > s.maximum) errors.push(`${path}: above maximum ${s.maximum}`);
    }
    if (typeof value === 'string') {
      if (typeof s.minLength === 'number' && value.length < s.minLength) errors.push(`${path}: shorter than ${s.minLength}`);
      if (s.format === 'uuid' && !UUID.test(value)) errors.push(`${path}: not a uuid`);
    }
    if (Array.isArray(value)) this.checkArray(s, value, path, errors);
    else if (value !== null && typeof value === 'object' && (s.properties || s.additionalProperties !== undefined)) {
      this.checkObject(s, value as Record<string, unknown>, path, errors);
    }
  }

  private checkType(s: Schema, value: unknown, path: string, errors: string[]): boolean {
    const t = s.type as string;
    let ok: boolean;
    switch (t) {
      case 'integer':
        ok = typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
        if (ok && typeof s.format === 'string' && s.format.startsWith('uint')) {
          const max = { uint8: 255n, uint32: 4294967295n, uint64: 18446744073709551615n, uint: 18446744073709551615n }[s.format];
          const big = BigInt(value as number | bigint);
          if (big < 0n || (max !== undefined && big > max)) {
            errors.push(`${path}: out of range for ${s.format}`);
          }
        }
        break;
      case 'number':
        ok = typeof value === 'number' && Number.isFinite(value);
        break;
      case 'string':
        ok = typeof value === 'string';
        break;
      case 'boolean':
        ok = typeof value === 'boolean';
        break;
      case 'array':
        ok = Array.isArray(value);
        break;
      case 'object':
        ok = value !== null && typeof value === 'object' && !Array.isArray(value);
        break;
      default:
        throw new Error(`unsupported type ${t}`);
    }
    if (!ok) errors.push(`${path}: expected ${t}, got ${describe(value)}`);
    return ok;
  }

  private checkArray(s: Schema, value: unknown[], path: string, errors: string[]): void {
    if (typeof s.minItems === 'number' && value.length < s.minItems) errors.push(`${path}: fewer than ${s.minItems} items`);
    if (s.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) {
      errors.push(`${path}: items are not unique`);
    }
    if (s.items) value.forEach((item, i) => this.check(s.items as Schema, item, `${path}[${i}]`, errors));
  }

  private checkObject(s: Schema, value: Record<string, unknown>, path: string, errors: string[]): void {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const req of (s.required ?? []) as string[]) {
      if (!(req in value)) errors.push(`${path}: missing required property ${req}`);
    }
    for (const [key, v] of Object.entries(value)) {
      const p = props[key];
      if (p) {
        this.check(p, v, `${path}.${key}`, errors);
      } else if (s.additionalProperties === false || (this.strict && s.additionalProperties === undefined)) {
        errors.push(`${path}: unknown property ${key}`);
      } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        this.check(s.additionalProperties as Schema, v, `${path}.${key}`, errors);
      }
    }
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
