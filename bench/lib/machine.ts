/** The machine a bench ran on, and how much of it the host gave to other guests meanwhile. */
import { readFileSync } from 'node:fs';
import os from 'node:os';

interface Jiffies {
  steal: number;
  /** neither idle nor waiting for I/O: this machine's processes, the kernel, interrupts */
  busy: number;
  total: number;
}

export interface CpuTimes extends Jiffies {
  /** the same, CPU by CPU (cpu0, cpu1, ...) */
  perCpu: Jiffies[];
}

/** /proc/stat fields: user nice system idle iowait irq softirq steal ... */
function jiffies(line: string): Jiffies {
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const steal = f[7] ?? 0;
  return { steal, busy: total - (f[3] ?? 0) - (f[4] ?? 0) - steal, total };
}

/** CPU time the hypervisor gave to others while this machine wanted it (/proc/stat "steal"), and busy time, in jiffies. */
export function cpuTimes(): CpuTimes | undefined {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    return { ...jiffies(lines[0]!), perCpu: lines.filter((l) => /^cpu\d+ /.test(l)).map(jiffies) };
  } catch {
    return undefined; // not Linux
  }
}

const share = (part: number, whole: number) => Math.round((part / whole) * 1000) / 10;

/** Per CPU between two reads: percent of its time busy with this machine's work, and taken by the host. */
export function perCpuPercent(before: CpuTimes | undefined, after: CpuTimes | undefined): Array<{ busy: number; steal: number }> | null {
  if (!before || !after) return null;
  return after.perCpu.map((a, i) => {
    const b = before.perCpu[i] ?? { steal: 0, busy: 0, total: 0 };
    const total = a.total - b.total;
    return total > 0 ? { busy: share(a.busy - b.busy, total), steal: share(a.steal - b.steal, total) } : { busy: 0, steal: 0 };
  });
}

/** Share of the CPUs' time taken by the host between two reads, in percent (one decimal); null when unknown. */
export function stealPercent(before: CpuTimes | undefined, after: CpuTimes | undefined): number | null {
  return before && after && after.total > before.total ? share(after.steal - before.steal, after.total - before.total) : null;
}

/** What the results file says about the machine; `steal` is stealPercent over the run. */
export function machineInfo(loadBefore: number[], steal: number | null) {
  const cpus = os.cpus();
  return {
    cpus: cpus.length, // the machine's, not this process's (a pinned process has fewer available)
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageBefore: loadBefore.map((l) => Math.round(l * 100) / 100),
    loadAverageAfter: os.loadavg().map((l) => Math.round(l * 100) / 100),
    // share of the CPUs' time taken by the host for other guests during the run: results move with it
    stealPercent: steal,
  };
}
