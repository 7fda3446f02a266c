import { JSON_ONLY, sendJson } from '../../http.ts';
import type { RouteTable } from '../../route.ts';

/** The API version the specification describes (002: "Versioning"). */
export const API_VERSION = '39.0.0rc1';

export const registerPingRoutes = (routes: RouteTable): void => {
  for (const path of ['/ping', '/ping/']) {
    routes.get(path, { auth: false, accept: JSON_ONLY, summary: 'The API version, without a token.' }, (ctx) =>
      sendJson(ctx, { version: API_VERSION }),
    );
  }
};
