/**
 * The base of the commands that take `--json`: one report shape (report.ts) on success, on
 * failure and for flag-parsing errors, and one mapping from errors to exit codes.
 */
import { Command, type Interfaces } from '@oclif/core';
import { UsageError, errorOf, exitCodeOf, failed, type Report } from './report.js';

// oclif's parser output shapes, which its package index does not export
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type FlagOutput = { [name: string]: any };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ArgOutput = { [name: string]: any };

export abstract class ReportingCommand extends Command {
  /** Set from argv before parsing, so that a flag-parsing error is reported as JSON too. */
  protected json = false;
  private reported = false;

  override async init(): Promise<void> {
    await super.init();
    const end = this.argv.indexOf('--');
    this.json = (end === -1 ? this.argv : this.argv.slice(0, end)).includes('--json');
  }

  /** Print the report (JSON) or the human lines (stdout). */
  protected report(report: Report, human: string[]): void {
    this.reported = true;
    if (this.json) this.log(JSON.stringify(report));
    else for (const line of human) this.log(line);
  }

  /** Report the failure and exit (2 when the command could not start, else 1, or `exit`). */
  protected fail(error: unknown, options: { prefix?: string; taskUid?: number | null; details?: Record<string, unknown>; exit?: number } = {}): never {
    const taskUid = options.taskUid ?? taskUidOf(error);
    if (this.json) this.log(JSON.stringify(failed(error, taskUid, options.details)));
    this.reported = true;
    const message = errorOf(error).message;
    this.error(options.prefix ? `${options.prefix}: ${message}` : message, { exit: options.exit ?? exitCodeOf(error) });
  }

  /** Any error of oclif's parsing (unknown flag, bad value, missing argument) means the command could not start. */
  protected override async parse<F extends FlagOutput, B extends FlagOutput, A extends ArgOutput>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    try {
      return await super.parse(options, argv);
    } catch (error) {
      this.fail(new UsageError((error as Error).message.replace(/\s+/g, ' ').trim(), 'invalid_flags'));
    }
  }
}

/** The task an error is about (a failed task, a wait that timed out), when it names one. */
export function taskUidOf(error: unknown): number | null {
  const uid = (error as { task?: { uid?: unknown } } | null)?.task?.uid;
  return typeof uid === 'number' ? uid : null;
}
