import { readFileSync } from 'node:fs';

/** Waits until `condition` holds, looking every `pollMs`; throws naming `what` after `timeoutMs`. */
export const waitFor = async (
  what: string,
  condition: () => boolean | Promise<boolean>,
  pollMs: number,
  timeoutMs: number,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
};

/** CPU time (user and system) one process has used so far, in milliseconds (its children not counted). */
export const processCpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};
