#!/usr/bin/env node
// The `search` command line: oclif finds the commands compiled to dist/commands (see package.json).
import { execute } from '@oclif/core';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // one line naming each version as what it is (src/cli/version.ts), rather than oclif's user agent
  const { versionLine } = await import('../dist/src/cli/version.js');
  process.stdout.write(`${versionLine()}\n`);
} else {
  await execute({ dir: import.meta.url });
}
