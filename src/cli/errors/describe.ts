/**
 * What the CLI tells people when something goes wrong. Every failure becomes a
 * `Report`: a code, a message, an exit code and, when the person can fix it, the next
 * thing to try. Unexpected errors are reported as bugs (exit 70), never dressed up.
 * The base command is the one place that prints a Report.
 */
import { Errors } from '@oclif/core';
import { AgentpayError } from 'agentpay-sdk/errors';
import { isAppError } from '../../core/errors.js';
import { DevCredentialsError } from '../../gateway/dev-credentials.js';
import { CliError, EXIT } from './cli-error.js';
import { inCliTerms } from './cli-terms.js';
import { devCredentialsError } from './dev-credentials.js';
import { tryForGateway } from './hints.js';
import { connectionReport } from './network.js';
import { parseErrorReport } from './oclif.js';
import type { Report, ReportContext } from './report.js';
import { storageError } from './storage.js';

/** Any failure as the Report the base command prints. */
export function describeError(err: unknown, ctx: ReportContext = {}): Report {
  const help = ctx.command ? `${ctx.command} --help` : 'agentpay --help';
  if (err instanceof DevCredentialsError) return describeError(devCredentialsError(err), ctx);
  if (err instanceof CliError) {
    return {
      code: err.code,
      message: err.message,
      details: err.details,
      exit: err.exit,
      ...(err.tryNext ? { tryNext: err.tryNext } : err.exit === EXIT.USAGE ? { tryNext: help } : {}),
    };
  }
  if (err instanceof AgentpayError) {
    const conn = err.status === undefined ? connectionReport(err, ctx) : undefined;
    if (conn) return conn;
    const cli = inCliTerms(err, ctx);
    const tryNext = tryForGateway(err, ctx) ?? (cli.flag ? help : undefined);
    const errorId = err.body.errorId;
    return {
      code: err.code,
      message: typeof errorId === 'string' ? `${cli.message} (errorId ${errorId})` : cli.message,
      details: { ...err.details, ...(cli.flag ? { flag: cli.flag } : {}), ...(err.status ? { status: err.status } : {}), ...(typeof errorId === 'string' ? { errorId } : {}) },
      exit: err.status === 401 ? EXIT.UNAUTHENTICATED : EXIT.REFUSED,
      ...(tryNext ? { tryNext } : {}),
    };
  }
  // validation by shared helpers (e.g. parseMinor) on input the person typed
  if (isAppError(err)) {
    return { code: err.code, message: err.message, details: err.details, exit: EXIT.REFUSED, tryNext: help };
  }
  // oclif's own parse errors: unknown flag, missing argument, bad option value
  if (err instanceof Errors.CLIError) return parseErrorReport(err, ctx, help);
  // @inquirer/prompts: Ctrl-C or a closed terminal while asking
  if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) {
    return { code: 'CANCELLED', message: 'cancelled; nothing was sent', details: {}, exit: EXIT.CANCELLED };
  }
  const conn = connectionReport(err, ctx);
  if (conn) return conn;
  const storage = storageError(err, ctx.dataDir);
  if (storage) return describeError(storage, ctx);
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'INTERNAL', message, details: {}, exit: EXIT.BUG, bug: true };
}
