import { AgentpayCommand } from '../../src/cli/base-command.js';
import { EXIT } from '../../src/cli/errors/index.js';
import { lintDiagnostics, lintFailed, lintFiles, lintText } from '../../src/cli/policies.js';

export default class PoliciesLint extends AgentpayCommand<typeof PoliciesLint> {
  static override summary = 'Check policy documents offline, with the parser the gateway uses';
  static override description = [
    'Needs no gateway. Each error is printed on stderr as FILE:LINE:COL: MESSAGE; the exit code is 1 if any file',
    'has an error, else 0. With --json (or when stdout is piped) stdout carries {files: [{file, ok, errors}]}.',
  ].join('\n');
  static override examples = ['<%= config.bin %> policies lint policies.txt', '<%= config.bin %> policies lint policies/*.txt --json'];
  // any number of files
  static override strict = false;

  async run(): Promise<void> {
    const { argv } = await this.parse(PoliciesLint);
    const report = lintFiles(argv as string[]);
    for (const line of lintDiagnostics(report)) this.out.note(line);
    this.out.result(report, () => lintText(report));
    if (lintFailed(report)) this.exit(EXIT.REFUSED);
  }
}
