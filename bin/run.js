#!/usr/bin/env node
// The `search` command line: oclif finds the commands compiled to dist/commands (see package.json).

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // one line naming each version as what it is (src/cli/version.ts), rather than oclif's user agent
  const { versionLine } = await import('../dist/src/cli/version.js');
  process.stdout.write(`${versionLine()}\n`);
} else {
  // `serve` runs again with the process settings it wants (src/cli/process-settings.ts)
  const again = args[0] === 'serve' && (await (await import('../dist/src/cli/process-settings.js')).runWithProcessSettings());
  // oclif loaded only here: a parent standing in for its child keeps little
  if (!again) await (await import('@oclif/core')).execute({ dir: import.meta.url });
}
