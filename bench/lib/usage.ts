/** CPU time and event-loop utilization of this process between two reads. */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface Usage {
  /** user + system CPU seconds per wall second (1.0 = one core busy) */
  cpuCores: number;
  /** share of wall time the event loop was busy */
  eventLoopUtilization: number;
  /** user + system CPU milliseconds */
  cpuMs: number;
  wallMs: number;
}

export class UsageMeter {
  private cpu = process.cpuUsage();
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private t = performance.now();

  /** Usage since the last call (or construction), and restart from now. */
  take(): Usage {
    const cpu = process.cpuUsage(this.cpu);
    const elu = performance.eventLoopUtilization(this.elu);
    const wallMs = performance.now() - this.t;
    this.cpu = process.cpuUsage();
    this.elu = performance.eventLoopUtilization();
    this.t = performance.now();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return { cpuCores: Math.round((cpuMs / wallMs) * 100) / 100, eventLoopUtilization: Math.round(elu.utilization * 100) / 100, cpuMs: Math.round(cpuMs), wallMs: Math.round(wallMs) };
  }
}

/** CPU milliseconds per call: stable even when other work shares the machine. */
export const perCall = (u: Pick<Usage, 'cpuMs'>, calls: number) => (calls ? Math.round((u.cpuMs / calls) * 1000) / 1000 : 0);
