/**
 * A job run every `intervalMs` on a timer that never keeps the process alive, never
 * overlapping itself (a run still going when the next is due is skipped), and stopped
 * by waiting for the run in progress, so the store can close after. Used by the expiry
 * sweeper and the rail jobs; tests call their run methods directly with a manual clock.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly run: (onError: (e: unknown) => void) => Promise<unknown>) {}

  /**
   * Starts the timer; a failed run is reported to `onError` and tried again next time. With
   * `when`, each tick runs only if it resolves true (a fleet duty this instance holds: see
   * Store.claimDuty); a failed `when` counts as false.
   */
  start(intervalMs: number, onError: (e: unknown) => void = () => {}, when?: () => Promise<boolean>): void {
    if (this.timer || intervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      const go = when ? when().catch(() => false) : Promise.resolve(true);
      this.running = go.then((ok) => (ok ? this.run(onError) : undefined))
        .catch(onError)
        .finally(() => {
          this.running = undefined;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
