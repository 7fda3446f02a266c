import { settingValue } from '../domain/config/settings.ts';
import { configSections } from '../projections/config/configQueries.ts';
import type { ReadModels } from '../projections/runtime/readModels.ts';
import { reactsTo, type Role } from './role.ts';
import { RoleStatusStore, type RoleStatus } from './roleStatus.ts';

export type DaemonStatus = RoleStatus &
  Readonly<{
    /** The events a role reacts to, or the interval `/config` gives a scheduled role with its other settings. */
    trigger: string;
  }>;

/**
 * Every daemon role with its trigger, queue depths and last cycle, read from the deployment's
 * Redis (`<prefix>:roles` and the queues): what `dms workers status` prints, for
 * `GET /admin/daemons`.
 */
export const daemonStatus = async (
  redisUrl: string,
  prefix: string,
  readModels: ReadModels,
  roles: readonly Role[],
): Promise<DaemonStatus[]> => {
  const store = new RoleStatusStore(redisUrl, prefix);
  try {
    const sections = await configSections(readModels);
    const statuses = await store.statusOf(roles);
    return statuses.flatMap((status) => {
      const role = roles.find((candidate) => candidate.name === status.role);
      if (!role) return [];
      if (role.kind === 'event') return [{ ...status, trigger: reactsTo(role).join(', ') }];
      const shown = (role.settings ?? []).map(
        (setting) => `${setting.option} ${String(settingValue(sections, setting))}`,
      );
      const every = `every ${settingValue(sections, role.interval)} s`;
      return [{ ...status, trigger: shown.length > 0 ? `${every} (${shown.join(', ')})` : every }];
    });
  } finally {
    await store.close();
  }
};
