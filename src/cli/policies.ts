/**
 * The `agentpay policies` commands' work: policy documents read from files, linted
 * offline with the gateway's own parser, applied, switched on and off, and dry-run
 * against a purchase; plus how a person sees policies and decisions.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseMinor } from '../core/money.js';
import { documentSizeError, lintPolicyDocument, type PolicyParseError } from '../domain/policies/language/parser.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { Policy, PolicyEvaluation } from 'agentpay-sdk/types';
import { AgentpayError } from 'agentpay-sdk/errors';
import { CliError, usageError } from './errors/index.js';
import { renderFields, renderTable } from './output.js';

/** A policy document's text; a missing file is a usage error naming it. */
export function readPolicyFile(file: string): string {
  const path = resolve(file);
  if (!existsSync(path)) throw usageError(`${file} does not exist`, 'pass the path of a policy document', { file });
  if (statSync(path).isDirectory()) throw usageError(`${file} is a directory, not a policy document`, 'pass the path of a policy document', { file });
  return readFileSync(path, 'utf8');
}

/** The parser's message without its leading position, which the `file:line:col:` form carries. */
const withoutPosition = (message: string) => message.replace(/^(document: )?line \d+, column \d+: /, '');

/** A refused document as lint reports it: `file:line:col: message`, and what to do next. */
function refusedDocument(file: string, message: string, details: { line: unknown; column: unknown } & Record<string, unknown>): CliError {
  return new CliError('VALIDATION_FAILED', `${file}:${String(details.line)}:${String(details.column)}: ${withoutPosition(message)}; nothing was applied`, {
    tryNext: `find every error at once, offline: agentpay policies lint ${file}`,
    details: { ...details, file },
  });
}

export async function applyPolicies(client: AgentpayClient, file: string): Promise<{ policies: Policy[] }> {
  const document = readPolicyFile(file);
  // the gateway's schema refuses an empty or too long document before its parser, in words that
  // cannot name the file: say it here as the parser would
  const size = documentSizeError(document);
  if (size) throw refusedDocument(file, size.message, { field: 'document', line: size.line, column: size.column, expected: size.expected });
  try {
    return await client.policies.apply(document);
  } catch (e) {
    // a refused document: point at the place in the file, as lint does
    if (e instanceof AgentpayError && e.code === 'VALIDATION_FAILED' && typeof e.details.line === 'number') {
      throw refusedDocument(file, e.message, { ...e.details, line: e.details.line, column: e.details.column });
    }
    throw e;
  }
}

export async function setEnabled(client: AgentpayClient, id: string, enabled: boolean): Promise<{ policy: Policy }> {
  return enabled ? client.policies.enable(id) : client.policies.disable(id);
}

// ---- lint: offline, the same parser the gateway enforces documents with ----

export interface LintedFile {
  /** the path as given */
  file: string;
  ok: boolean;
  errors: PolicyParseError[];
}

export interface LintReport {
  files: LintedFile[];
}

/** Lints every file; all must exist (checked first, so nothing is half-reported). */
export function lintFiles(files: readonly string[]): LintReport {
  if (files.length === 0) throw usageError('name at least one policy document', 'agentpay policies lint policies.txt');
  const texts = files.map((file) => readPolicyFile(file));
  return {
    files: files.map((file, i) => {
      const { ok, errors } = lintPolicyDocument(texts[i]!);
      return { file, ok, errors };
    }),
  };
}

export const lintFailed = (report: LintReport) => report.files.some((f) => !f.ok);

/** Compiler-style lines, `file:line:col: message`, which editors and CI annotate. */
export function lintDiagnostics(report: LintReport): string[] {
  return report.files.flatMap((f) => f.errors.map((e) => `${f.file}:${e.line}:${e.column}: ${withoutPosition(e.message)}`));
}

/** What a person sees on stdout: "ok" for a clean run, else a count. */
export function lintText(report: LintReport): string {
  if (!lintFailed(report)) return report.files.length === 1 ? 'ok' : `ok (${report.files.length} files)`;
  const errors = report.files.reduce((n, f) => n + f.errors.length, 0);
  const bad = report.files.filter((f) => !f.ok).length;
  return `${errors} error${errors === 1 ? '' : 's'} in ${bad} of ${report.files.length} file${report.files.length === 1 ? '' : 's'}`;
}

// ---- test: a dry run of the gateway's decision ----

export interface TestInput {
  walletId: string;
  capabilityId: string;
  /** integer minor units as typed; default: the capability's current price */
  price?: string | undefined;
}

export async function testPolicies(client: AgentpayClient, input: TestInput): Promise<PolicyEvaluation> {
  return client.policies.evaluate({
    walletId: input.walletId,
    capabilityId: input.capabilityId,
    // zero is a price the gateway evaluates (POST /v1/policies/evaluate allows it)
    ...(input.price !== undefined ? { priceMinor: parseMinor(input.price, '--price', { allowZero: true }).toString() } : {}),
  });
}

// ---- how a person sees policies ----

export function policyTable(policies: readonly Policy[], empty = '(no policies)'): string {
  return renderTable(policies, [
    { header: 'ID', get: (p) => p.id },
    { header: 'TYPE', get: (p) => p.policyType },
    { header: 'NAME', get: (p) => p.name },
    { header: 'ENABLED', get: (p) => (p.enabled ? 'yes' : 'no') },
    { header: 'RULES', get: (p) => p.rules.join(' | ') },
  ], empty);
}

export function policyFields(p: Policy): string {
  return renderFields([
    ['id', p.id],
    ['type', p.policyType],
    ['name', p.name],
    ['enabled', p.enabled ? 'yes' : 'no'],
    ['rules', p.rules.join(' | ')],
    ['updated', p.updatedAt],
  ]);
}

const DECISION_TEXT: Record<PolicyEvaluation['decision'], string> = {
  allow: 'allow: the policies let the purchase through (the balance is not checked)',
  deny: 'deny: the purchase would be refused with POLICY_DENIED',
  approval: 'approval: the purchase would be held for a person (APPROVAL_REQUIRED)',
};

export function evaluationText(e: PolicyEvaluation): string {
  const head = renderFields([
    ['decision', DECISION_TEXT[e.decision] ?? e.decision],
    ['rule', e.matchedRule ? `${e.matchedRule.rule} (${e.matchedRule.policyId})` : 'none matched'],
    ['reason', e.reason],
    ...(e.approvalId ? ([['approval', e.approvalId]] as const) : []),
  ]);
  const steps = renderTable(e.steps, [
    { header: 'POLICY', get: (s) => s.policyId },
    { header: 'TYPE', get: (s) => s.policyType },
    { header: 'RESULT', get: (s) => s.result },
    { header: 'RULE', get: (s) => s.rule },
  ], '(no enabled policies)');
  return `${head}\n\nsteps, in the order the gateway evaluates them:\n${steps}`;
}
