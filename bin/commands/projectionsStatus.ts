import type { ServiceConfig } from '../../infra/serviceConfig.ts';
import { projectionReportJson } from '../../api/routes/admin/projections.ts';
import { openStores } from '../../infra/stores.ts';
import { allProjections } from '../../projections/index.ts';
import { projectionReports } from '../../projections/runtime/projectionStatus.ts';
import { aliveProjectors } from '../../projections/runtime/projectionState.ts';
import { printTable } from './table.ts';

/**
 * Prints each projection's version, serving generation, checkpoint, the head of `$all`, the lag,
 * its status (with any rebuild in progress), and which projector processes are alive: what
 * `GET /admin/projections` answers too (projections/runtime/projectionStatus.ts). `--json` prints
 * `{ projections: [...as GET /admin/projections answers], projectors: ["host:pid", ...] }`.
 */
export const projectionsStatusCommand = async (
  config: ServiceConfig,
  options: Readonly<{ json?: boolean; wide?: boolean }> = {},
): Promise<number> => {
  const { eventStore, readStore } = await openStores(config);
  try {
    const reports = await projectionReports(eventStore, readStore, allProjections);
    const alive = await aliveProjectors(readStore);
    if (options.json) {
      console.log(
        JSON.stringify(
          { projections: reports.map(projectionReportJson), projectors: alive.map((heartbeat) => heartbeat._id) },
          null,
          2,
        ),
      );
      return 0;
    }
    const rows = [['projection', 'version', 'generation', 'checkpoint', 'head', 'lag', 'status']];
    for (const report of reports) {
      let status: string = report.status;
      if (report.error) status += `: ${report.error}`;
      const { rebuild } = report;
      if (rebuild) {
        status += `; rebuilding generation ${rebuild.generation} (version ${rebuild.version}), ${Math.floor(rebuild.progress * 100)}%, lag ${rebuild.lag}${rebuild.error ? `, failed: ${rebuild.error}` : ''}`;
      }
      rows.push([
        report.name,
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
      alive.length > 0
        ? `projectors: ${alive.map((heartbeat) => heartbeat._id).join(', ')}`
        : 'projectors: none running',
    );
    return 0;
  } finally {
    await eventStore.close();
    await readStore.close();
  }
};
