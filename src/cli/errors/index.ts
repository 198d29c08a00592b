/**
 * The CLI's errors, one job per file: `cli-error` (CliError, exit codes), `describe` (any error
 * as the Report the base command prints), `hints` (the next step for a gateway refusal),
 * `cli-terms` (gateway messages in the CLI's words), `network`, `storage`, `dev-credentials`
 * and `oclif` (failures of one kind as a Report or CliError).
 */
export { CliError, EXIT, usageError } from './cli-error.js';
export { describeError } from './describe.js';
export { networkFailure } from './network.js';
export type { Report, ReportContext } from './report.js';
export { storageError } from './storage.js';
