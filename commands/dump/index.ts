import DumpCreate from './create.js';

/** `search dump` alone creates a dump, as `search dump create`. */
export default class Dump extends DumpCreate {
  static override summary = 'Create a dump (same as `search dump create`); `search dump import` restores one.';
}
