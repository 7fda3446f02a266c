import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { projectionReportJson } from '../../api/routes/admin/projections.ts';
import { openStores } from '../../infra/stores.ts';
import { projectionReports } from '../../projections/runtime/projectionStatus.ts';
import { aliveProjectors, type ProjectorHeartbeatDocument } from '../../projections/runtime/projectionState.ts';
import { ReadModels } from '../../projections/runtime/readModels.ts';
import { printTable } from './table.ts';

/**
 * Prints each projection's version, serving generation, checkpoint, the head of `$all`, the lag,
 * its group, its status (with any rebuild in progress), and which projector processes are alive
 * with the groups each runs: what `GET /admin/projections` answers too
 * (projections/runtime/projectionStatus.ts). `--json` prints `{ projections: [...as GET
 * /admin/projections answers], projectors: ["host:pid", ...] }`.
 */
export const projectionsStatusCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean; wide?: boolean }> = {},
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  const readModels = await ReadModels.open(config, readStore);
  try {
    const { stores } = readModels;
    const reports = await projectionReports(eventStore, stores);
    const alive = projectorProcesses(
      (await Promise.all(stores.distinctStores().map((store) => aliveProjectors(store)))).flat(),
    );
    if (options.json) {
      console.log(
        JSON.stringify(
          {
            projections: reports.map(projectionReportJson),
            projectors: [...alive.keys()],
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const rows = [['projection', 'group', 'version', 'generation', 'checkpoint', 'head', 'lag', 'status']];
    for (const report of reports) {
      let status: string = report.status;
      if (report.error) status += `: ${report.error}`;
      const { rebuild } = report;
      if (rebuild) {
        status += `; rebuilding generation ${rebuild.generation} (version ${rebuild.version}), ${Math.floor(rebuild.progress * 100)}%, lag ${rebuild.lag}${rebuild.error ? `, failed: ${rebuild.error}` : ''}`;
      }
      rows.push([
        report.name,
        report.group,
        String(report.version),
        report.generation === undefined ? '-' : String(report.generation),
        report.checkpoint.toString(),
        report.head.toString(),
        report.lag.toString(),
        status,
      ]);
    }
    printTable(rows, options);
    console.log(
      alive.size > 0
        ? `projectors: ${[...alive].map(([process, groups]) => `${process} (${groups.join(', ')})`).join(', ')}`
        : 'projectors: none running',
    );
    return 0;
  } finally {
    await eventStore.close();
    await readModels.close();
    await readStore.close();
  }
};

/** The processes alive (`host:pid`), each with the projection groups it runs. */
const projectorProcesses = (heartbeats: readonly ProjectorHeartbeatDocument[]): Map<string, string[]> => {
  const processes = new Map<string, string[]>();
  for (const heartbeat of heartbeats) {
    const key = `${heartbeat.host}:${heartbeat.pid}`;
    const groups = processes.get(key) ?? [];
    if (heartbeat.group && !groups.includes(heartbeat.group)) groups.push(heartbeat.group);
    processes.set(key, groups);
  }
  return processes;
};
