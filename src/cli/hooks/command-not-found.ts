/**
 * `search dmup`: say that it is not a command and suggest the nearest one ("did you mean"),
 * with the same exit code (2) and, under `--json`, the same report as any other usage error.
 */
import { Errors, type Hook } from '@oclif/core';
import { closest, distance } from 'fastest-levenshtein';
import { failed } from '../report.js';

const hook: Hook<'command_not_found'> = async function (options) {
  const typed = options.id.replace(/:/g, ' ');
  const commands = options.config.commandIDs.map((id) => id.replace(/:/g, ' '));
  const nearest = commands.length > 0 ? closest(typed, commands) : null;
  // a suggestion only when it is plausibly a typo: at most a third of the letters differ
  const suggestion = nearest && distance(typed, nearest) <= Math.max(2, Math.floor(typed.length / 3)) ? nearest : null;
  const bin = options.config.bin;
  const message = `\`${bin} ${typed}\` is not a command.${suggestion ? ` Did you mean \`${bin} ${suggestion}\`?` : ''} Run \`${bin} --help\` for the list.`;
  if (options.argv?.includes('--json')) process.stdout.write(`${JSON.stringify(failed({ code: 'invalid_command', message }))}\n`);
  throw new Errors.CLIError(message, { exit: 2 });
};

export default hook;
