import { readFileSync } from 'node:fs';
import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { verifyHashChains, type VerifyReport } from '../../infra/eventstore/hashChains.ts';
import { AnchorError, parseAnchor, trustAnchor, type LogAnchor } from '../../infra/eventstore/logAnchor.ts';
import type { LogChainMode } from '../../infra/eventstore/logChain.ts';
import { openStores } from '../../infra/stores.ts';
import { grouped, Progress } from './progress.ts';

/**
 * `dms audit verify`: recomputes the hash chain of every stream and the log chain through `$all`
 * (infra/eventstore/hashChains.ts, logChain.ts), with progress on stderr, and names the first
 * broken link: stream, revision and position. With `--anchor FILE` (an anchor `dms audit anchor`
 * wrote earlier, `--key-file` when it is signed) it also checks that the log still ends no earlier
 * than the anchor and holds the anchored chain. Exit status 0 when everything holds, 1 at a
 * break or an anchor that cannot be trusted. `--json` prints the summary as one document instead
 * (`verifyJson`).
 */
export const auditVerifyCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean; anchor?: string; keyFile?: string }> = {},
): Promise<number> => {
  const mode = logChainModeOf(config);
  let anchor: LogAnchor | undefined;
  try {
    if (options.anchor !== undefined) {
      anchor = parseAnchor(readText(options.anchor, 'anchor'));
      trustAnchor(anchor, options.keyFile === undefined ? undefined : readKey(options.keyFile), mode);
    } else if (options.keyFile !== undefined)
      throw new AnchorError('--key-file checks an anchor: give it with --anchor');
  } catch (error) {
    if (!(error instanceof AnchorError)) throw error;
    console.error(error.message);
    return 1;
  }
  const { eventStore, readStore } = await openStores(config);
  try {
    const head = await eventStore.headPosition();
    const progress = new Progress('verify', 'events');
    const started = Date.now();
    const report = await verifyHashChains(eventStore, {
      logChain: mode,
      ...(anchor ? { anchor } : {}),
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

/** SQLite stores the log chain with every event; on EventStoreDB it is computed as the log is read. */
export const logChainModeOf = (config: ServiceConfig): LogChainMode =>
  config.eventStore.kind === 'sqlite' ? 'stored' : 'computed';

/** A file's text, or an AnchorError naming what could not be read. */
export const readText = (path: string, what: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new AnchorError(`Cannot read the ${what} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
};

/**
 * The signing key in a file (`openssl rand -hex 32 > anchor.key`): its bytes without the
 * whitespace that ends the file, at least 16 of them.
 */
export const readKey = (path: string): Buffer => {
  const key = Buffer.from(readText(path, 'key file').trimEnd(), 'utf8');
  if (key.length < 16) throw new AnchorError(`The key file ${path} holds ${key.length} bytes: a key needs at least 16`);
  return key;
};

/** The summary for scripts: the counts, whether everything holds, the log chain, the anchor, and the first break or null. */
export const verifyJson = (report: VerifyReport, seconds: number) => ({
  holds: !report.firstBreak,
  events: report.events,
  streams: report.streams,
  hashed: report.hashed,
  unhashed: report.unhashed,
  truncated_streams: report.truncatedStreams,
  log_chain: {
    mode: report.logChain.mode,
    starts_at: report.logChain.startsAt === undefined ? null : Number(report.logChain.startsAt),
    unchained: report.logChain.unchained,
    chained: report.logChain.chained,
    head: report.logChain.head
      ? { position: Number(report.logChain.head.position), log_hash: report.logChain.head.logHash }
      : null,
  },
  anchor: report.anchor
    ? {
        taken_at: report.anchor.takenAt,
        position: Number(report.anchor.position),
        points: report.anchor.points,
        matched: report.anchor.matched,
      }
    : null,
  seconds: Math.round(seconds * 1000) / 1000,
  first_break: report.firstBreak
    ? {
        stream: report.firstBreak.streamName ?? null,
        revision: report.firstBreak.revision === undefined ? null : Number(report.firstBreak.revision),
        position: Number(report.firstBreak.position),
        reason: report.firstBreak.reason,
        detail: report.firstBreak.detail,
      }
    : null,
});

/** Where the break is, as the BROKEN line names it. */
const placeOf = (broken: NonNullable<VerifyReport['firstBreak']>): string => {
  if (broken.streamName === undefined) return `position ${broken.position}`;
  const where = `stream ${broken.streamName}, revision ${broken.revision}, position ${broken.position}`;
  return broken.reason === 'log-chain-mismatch' || broken.reason === 'unchained-after-chained'
    ? `the log chain at ${where}`
    : where;
};

/** What `verify` prints on stdout: the break first when there is one, then the counts, the log chain and the anchor. */
export const verifyLines = (report: VerifyReport, seconds: number): string[] => {
  const lines: string[] = [];
  if (report.firstBreak) lines.push(`BROKEN: ${placeOf(report.firstBreak)}: ${report.firstBreak.detail}`);
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
  lines.push(...logChainLines(report));
  if (!report.firstBreak)
    lines.push(report.anchor ? 'every hash chain holds, and the anchor too' : 'every hash chain holds');
  return lines;
};

const logChainLines = (report: VerifyReport): string[] => {
  const { logChain, anchor } = report;
  const lines: string[] = [];
  const head = logChain.head;
  if (logChain.mode === 'computed') {
    lines.push(
      head
        ? `log chain computed over ${grouped(logChain.chained)} events (EventStoreDB stores none; step bookkeeping left out): at position ${head.position} it is ${head.logHash}`
        : 'log chain: no event to chain',
    );
    if (!anchor)
      lines.push('without an anchor (--anchor FILE) a computed log chain shows nothing: removals show against one');
  } else if (head && logChain.startsAt !== undefined) {
    lines.push(
      `log chain from position ${logChain.startsAt} over ${grouped(logChain.chained)} events: at position ${head.position} it is ${head.logHash}`,
    );
    if (logChain.unchained > 0)
      lines.push(
        `${grouped(logChain.unchained)} events before position ${logChain.startsAt} were written before the log chain: only their streams' chains cover them`,
      );
  } else if (logChain.unchained > 0) {
    lines.push(
      `${grouped(logChain.unchained)} events written before the log chain, none after: the chain starts with the next event written`,
    );
  }
  if (anchor) {
    lines.push(
      `anchor taken at ${anchor.takenAt}, up to position ${anchor.position}: ${anchor.matched} of its ${anchor.points} points matched`,
    );
  } else if (logChain.mode === 'stored' && head) {
    lines.push('no anchor given: the newest events removed together show only against an anchor (dms audit anchor)');
  }
  return lines;
};
