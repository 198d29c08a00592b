/**
 * Progress for slow commands: a one-line spinner on stderr when stderr is a terminal,
 * nothing otherwise (pipes and CI get clean output, JSON on stdout is never touched).
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Progress {
  /** what is happening now */
  update(text: string): void;
  /** clears the line */
  stop(): void;
}

export function startProgress(text: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => {}, stop: () => {} };
  let current = text;
  let frame = 0;
  const draw = () => stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current}`);
  draw();
  const timer = setInterval(draw, 80);
  timer.unref(); // a spinner never keeps the process alive
  let stopped = false;
  return {
    update(next) {
      current = next;
      if (!stopped) draw();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}
