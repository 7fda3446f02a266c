import type { ServiceConfig } from '../../infra/config.ts';
import { verifyHashChains, type VerifyReport } from '../../infra/eventstore/hashChains.ts';
import { openStores } from '../../infra/stores.ts';
import { grouped, Progress } from './progress.ts';

/**
 * `dms audit verify`: recomputes the hash chain of every stream through `$all`
 * (infra/eventstore/hashChains.ts), with progress on stderr, and names the first broken link:
 * stream, revision and position. Exit status 0 when every chain holds, 1 at a break. `--json`
 * prints the summary as one document instead (`verifyJson`).
 */
export const auditVerifyCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean }> = {},
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const head = await eventStore.headPosition();
    const progress = new Progress('verify', 'events');
    const started = Date.now();
    const report = await verifyHashChains(eventStore, {
      onProgress: (events, position) => progress.update(events, head === 0n ? 1 : Number(position) / Number(head)),
    });
    progress.finish();
    const seconds = (Date.now() - started) / 1000;
    if (options.json) console.log(JSON.stringify(verifyJson(report, seconds), null, 2));
    else for (const line of verifyLines(report, seconds)) console.log(line);
    return report.firstBreak ? 1 : 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};

/** The summary for scripts: the counts, whether every chain holds, and the first break or null. */
export const verifyJson = (report: VerifyReport, seconds: number) => ({
  holds: !report.firstBreak,
  events: report.events,
  streams: report.streams,
  hashed: report.hashed,
  unhashed: report.unhashed,
  truncated_streams: report.truncatedStreams,
  seconds: Math.round(seconds * 1000) / 1000,
  first_break: report.firstBreak
    ? {
        stream: report.firstBreak.streamName,
        revision: Number(report.firstBreak.revision),
        position: Number(report.firstBreak.position),
        reason: report.firstBreak.reason,
        detail: report.firstBreak.detail,
      }
    : null,
});

/** What `verify` prints on stdout: the break first when there is one, then the counts. */
export const verifyLines = (report: VerifyReport, seconds: number): string[] => {
  const lines: string[] = [];
  if (report.firstBreak) {
    const { streamName, revision, position, detail } = report.firstBreak;
    lines.push(`BROKEN: stream ${streamName}, revision ${revision}, position ${position}: ${detail}`);
  }
  const rate = grouped(Math.round(report.events / Math.max(seconds, 0.001)));
  lines.push(
    `${report.firstBreak ? 'checked' : 'verified'} ${grouped(report.events)} events in ${grouped(report.streams)} streams ` +
      `(${grouped(report.hashed)} hashed) in ${seconds.toFixed(1)} s, ${rate} events/s`,
  );
  if (report.unhashed > 0) {
    lines.push(
      `${grouped(report.unhashed)} events unhashed (written before hashing): each chain starts at its stream's first hashed event; dms events export and import give a store hashes throughout`,
    );
  }
  if (report.truncatedStreams > 0)
    lines.push(
      `${grouped(report.truncatedStreams)} step bookkeeping streams start after revision 0 (their oldest events were removed by $maxAge)`,
    );
  if (!report.firstBreak) lines.push('every hash chain holds');
  return lines;
};
