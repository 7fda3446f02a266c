import { undertakerRole } from './did/undertakerRole.ts';
import { darkReaperRole } from './quarantine/darkReaperRole.ts';
import { reaperRole } from './replica/reaperRole.ts';
import { recoveryRoles } from './replica/recoveryRoles.ts';
import { conveyorRoles } from './request/conveyorRoles.ts';
import { judgeRoles } from './rule/judgeRoles.ts';
import type { Role } from './role.ts';
import { atroposRole } from './lifetimeException/atroposRole.ts';
import { hermesRole } from './message/hermesRole.ts';
import { transmogrifierRoles } from './subscription/transmogrifierRoles.ts';
import { kronosRole } from './trace/kronosRole.ts';
import { reconcilerRole } from './reconcile/reconcilerRole.ts';

/**
 * The daemon roles this service runs, each wiring a workflow of domain/ to its trigger: events
 * (through the reactor) or a schedule; an area with daemons lists its roles here. `dms serve` and
 * `dms worker` run all of them; `dms worker --roles a,b` only some.
 */
export const allRoles: readonly Role[] = [
  ...judgeRoles,
  undertakerRole,
  ...conveyorRoles,
  reaperRole,
  darkReaperRole,
  ...recoveryRoles,
  ...transmogrifierRoles,
  atroposRole,
  kronosRole,
  hermesRole,
  reconcilerRole,
];
