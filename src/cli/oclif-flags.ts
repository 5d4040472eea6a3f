/** oclif flags derived from an option table (see serve-options.ts), with the env names in the help. */
import { Flags } from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import { CONFIG_FILE_OPTION, envName, upstreamEnvName } from './serve-options.js';
import type { OptionSpec } from './serve-options.js';

function help(spec: OptionSpec): string {
  const parts = [spec.description];
  if (spec.default !== undefined) parts.push(`[default: ${String(spec.default)}]`);
  parts.push(`[env: ${envName(spec)}, ${upstreamEnvName(spec)}]`);
  return parts.join(' ');
}

/**
 * No oclif defaults or env bindings on purpose: an unset flag must stay undefined so that the
 * environment and the config file can supply the value (`resolveOptions` applies the defaults).
 */
export function flagsFor(specs: readonly OptionSpec[]): Interfaces.FlagInput {
  const flags: Interfaces.FlagInput = {};
  for (const spec of [...specs, CONFIG_FILE_OPTION]) {
    const common = { description: help(spec), aliases: spec.aliases ? [...spec.aliases] : undefined };
    if (spec.kind === 'boolean') flags[spec.name] = Flags.boolean({ ...common });
    else
      flags[spec.name] = Flags.string({
        ...common,
        helpValue: spec.kind === 'enum' ? spec.values!.join('|') : spec.kind === 'bytes' ? '<size>' : spec.kind === 'count' ? '<n>' : '<value>',
      });
  }
  return flags;
}
