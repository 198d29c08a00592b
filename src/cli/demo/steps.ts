/**
 * The demo's progress: a list of steps on stderr. On a terminal the step under way
 * spins (src/cli/spinner.ts) and is replaced by its line once done; when stderr is not
 * a terminal only the finished lines are written, one per step, for logs and CI.
 */
import { startProgress } from '../spinner.js';

export class Steps {
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  /** A line of its own, e.g. the heading. */
  line(text: string): void {
    this.stream.write(text + '\n');
  }

  /** Runs one step: `title` while it runs, then `✔ title: detail`, or `✖ title` and the error. */
  async run<T>(title: string, fn: () => Promise<T>, detail: (result: T) => string = () => ''): Promise<T> {
    const progress = startProgress(`${title} …`, this.stream);
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      progress.stop();
      this.line(`✖ ${title}`);
      throw e;
    }
    progress.stop();
    const d = detail(result);
    this.line(`✔ ${title}${d ? `: ${d}` : ''}`);
    return result;
  }
}
