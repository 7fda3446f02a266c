import { loadCaller } from '../../../commands/caller.ts';
import { HEARTBEAT_PERMISSIONS } from '../../../domain/permission/heartbeatPolicy.ts';
import { allowOnly } from '../../../domain/permission/policy.ts';
import { rucioDateOrNull } from '../../../domain/shared/dates.ts';
import { AccessDenied, KeyError, TypeError_, ValueError } from '../../../domain/shared/errors.ts';
import { HeartbeatStore, type HeartbeatDocument } from '../../../infra/heartbeats/heartbeatStore.ts';
import { JSON_ONLY, sendJson, sendText } from '../../http.ts';
import { jsonObjectBody, requiredValue } from '../../params.ts';
import { convertedBy } from '../../routeInput.ts';
import { z } from 'zod';
import type { RouteTable } from '../../route.ts';
import type { AppContext, Services } from '../../services.ts';
import { dateOf } from '../../../infra/clock.ts';

/** Rucio's column sizes: what a heartbeat from outside may hold. */
const MAX_EXECUTABLE = 4000;
const MAX_HOSTNAME = 128;
const MAX_PAYLOAD = 3000;

/** A heartbeat as Rucio's `list_heartbeats` gives it (dates in Rucio's format). */
const heartbeatJson = (heartbeat: HeartbeatDocument) => ({
  readable: heartbeat.readable,
  hostname: heartbeat.hostname,
  pid: heartbeat.pid,
  thread_name: heartbeat.thread_name,
  updated_at: rucioDateOrNull(heartbeat.updated_at),
  created_at: rucioDateOrNull(heartbeat.created_at),
  payload: heartbeat.payload,
});

const text = (value: unknown, name: string, maxLength: number): string => {
  if (typeof value !== 'string') throw new TypeError_(`'${name}' must be a string`);
  if (value === '' || value.length > maxLength)
    throw new ValueError(`'${name}' must hold 1 to ${maxLength} characters`);
  return value;
};

const wholeNumber = (value: unknown, name: string): number => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError_(`'${name}' must be an integer`);
  if (value < 0) throw new ValueError(`'${name}' must not be negative`);
  return value;
};

/** A heartbeat sent from outside: required keys first, in the order Rucio reads them. */
const heartbeatBody = jsonObjectBody(
  {
    executable: convertedBy(requiredValue(), (value) => text(value, 'executable', MAX_EXECUTABLE)),
    hostname: convertedBy(requiredValue(), (value) => text(value, 'hostname', MAX_HOSTNAME)),
    pid: convertedBy(requiredValue(), (value) => wholeNumber(value, 'pid')),
    older_than: convertedBy(z.unknown().optional(), (value) =>
      value == null ? undefined : wholeNumber(value, 'older_than'),
    ),
    payload: convertedBy(z.unknown().optional(), (value) =>
      value == null ? null : text(value, 'payload', MAX_PAYLOAD),
    ),
  },
  {
    description:
      '`executable`, `hostname` (strings), `pid` (integer), `older_than` (seconds, optional), `payload` (string, optional).',
  },
);

/**
 * `/heartbeats` (Rucio's heartbeats.py): root lists the heartbeats of every daemon, this
 * service's own roles (workers/workerHost.ts) and whatever beats from outside; root and admins
 * send them. They live outside the event log (infra/heartbeats/heartbeatStore.ts says why).
 */
export const registerHeartbeatRoutes = (routes: RouteTable, services: Services): void => {
  const heartbeats = new HeartbeatStore(services.readModels.store);
  const allowed = async (ctx: AppContext, permission: keyof typeof HEARTBEAT_PERMISSIONS, message: string) => {
    const caller = await loadCaller(services.commands, ctx.state.issuer!);
    allowOnly(HEARTBEAT_PERMISSIONS[permission](caller), `${caller.account} ${message}`);
  };

  routes.get(
    '/heartbeats',
    {
      accept: JSON_ONLY,
      errors: { AccessDenied: 401 },
      summary:
        'Every heartbeat: executable, host, process, thread, payload, when it was created and last renewed (root).',
      success: { status: 200, type: 'application/json', description: 'A JSON list of heartbeats.' },
      raises: [AccessDenied],
    },
    async (ctx) => {
      await allowed(ctx, 'list', 'cannot list heartbeats.');
      sendJson(ctx, (await heartbeats.list()).map(heartbeatJson));
    },
  );

  routes.post(
    '/heartbeats',
    {
      errors: { AccessDenied: 401 },
      summary: 'Records a heartbeat of a process; `older_than` expires the executable’s heartbeats that old (admins).',
      body: heartbeatBody,
      success: { status: 200, type: 'text/html; charset=utf-8', description: 'OK' },
      raises: [AccessDenied, KeyError, TypeError_],
    },
    async (ctx, { body }) => {
      const { executable, hostname, pid, older_than: olderThan, payload } = body;
      await allowed(ctx, 'send', 'cannot send heartbeats.');
      // Rucio names the thread of a heartbeat sent without one `thread`, with id 0.
      const input = { executable, hostname, pid, threadId: 0, threadName: 'thread', payload };
      await heartbeats.beat(input, dateOf(services.clock), olderThan);
      sendText(ctx, 'OK');
    },
  );
};
